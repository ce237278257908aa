// membership.js — the cluster's member list, after etcd's
// etcdserver/api/membership. The first members come from the initial-cluster
// configuration; every later change is a ConfChange entry of the raft log,
// applied on commit like any other entry and stored in the backend's cluster
// bucket. A removed member's id is kept, so it can never come back.

const CLUSTER = 'cluster';

export class RaftCluster {
  /**
   * @param {import('./backend.js').Backend} be
   * @param {string[]} initial the members the cluster was bootstrapped with
   */
  constructor(be, initial) {
    this.be = be;
    /** @type {Set<string>} */
    this.members = new Set(be.get(CLUSTER, 'members') ?? initial);
    /** @type {Set<string>} */
    this.removed = new Set(be.get(CLUSTER, 'removed') ?? []);
  }

  list() {
    return [...this.members].sort();
  }

  isMember(id) {
    return this.members.has(id);
  }

  isRemoved(id) {
    return this.removed.has(id);
  }

  addMember(id) {
    this.members.add(id);
    this.#save();
  }

  removeMember(id) {
    this.members.delete(id);
    this.removed.add(id);
    this.#save();
  }

  #save() {
    this.be.batchTx.put(CLUSTER, 'members', this.list());
    this.be.batchTx.put(CLUSTER, 'removed', [...this.removed].sort());
  }
}
