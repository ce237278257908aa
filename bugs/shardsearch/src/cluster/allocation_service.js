// allocation_service.js — shard allocation on the master, after Elasticsearch's
// AllocationService and ShardStateAction (master side). One index, `docs`, with
// one shard (`docs/0`) and `numberOfReplicas` replicas. The routing table names
// the primary and each replica by node and allocation id, with the replica's
// state (INITIALIZING until its recovery finishes, then STARTED) and the set of
// in-sync allocation ids: only an in-sync copy may be promoted to primary.

export const SHARD = 'docs/0';

export class AllocationService {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.numberOfReplicas = Number(rt.config.numberOfReplicas ?? 1);
    this.allocSeq = 0;
  }

  newAllocationId() {
    return `${this.rt.id}-${++this.allocSeq}-${Math.floor(this.rt.random() * 1e6).toString(36)}`;
  }

  /** Returns the state with a routing table that fits its nodes: failed copies removed, primary promoted, replicas assigned. */
  reroute(state) {
    const nodes = state.nodes;
    const prev = state.routing[SHARD];
    /** @type {{ primary: any, replicas: any[], inSync: string[] }} */
    let r = prev ? { primary: prev.primary, replicas: prev.replicas.map((x) => ({ ...x })), inSync: [...prev.inSync] } : { primary: null, replicas: [], inSync: [] };
    r.replicas = r.replicas.filter((x) => nodes.includes(x.node));
    if (r.primary && !nodes.includes(r.primary.node)) {
      const promoted = r.replicas.find((x) => x.state === 'STARTED' && r.inSync.includes(x.allocationId));
      this.rt.log.info('primary shard lost', { shard: SHARD, node: r.primary.node, promoted: promoted?.node ?? null });
      // Without an in-sync replica the primary stays assigned to its node: it is the only copy with the data.
      if (promoted) {
        r.primary = { node: promoted.node, allocationId: promoted.allocationId };
        r.replicas = r.replicas.filter((x) => x !== promoted);
      }
    }
    r.inSync = r.inSync.filter((id) => id === r.primary?.allocationId || r.replicas.some((x) => x.allocationId === id));
    // Data goes to the nodes other than the master when there are enough of them.
    const holders = () => [r.primary?.node, ...r.replicas.map((x) => x.node)].filter(Boolean);
    const pool = () => {
      const free = nodes.filter((n) => !holders().includes(n));
      const data = free.filter((n) => n !== state.master);
      return data.length > 0 ? data : free;
    };
    if (!r.primary && r.inSync.length === 0 && !prev?.created) {
      const node = pool()[1 % Math.max(1, pool().length)] ?? null;
      if (node) {
        const allocationId = this.newAllocationId();
        r.primary = { node, allocationId };
        r.inSync = [allocationId];
        this.rt.log.info('allocated new primary', { shard: SHARD, node });
      }
    }
    if (r.primary && nodes.includes(r.primary.node)) {
      while (r.replicas.length < this.numberOfReplicas && pool().length > 0) {
        const node = pool()[0];
        r.replicas.push({ node, allocationId: this.newAllocationId(), state: 'INITIALIZING' });
        this.rt.log.info('allocated replica', { shard: SHARD, node });
      }
    }
    return { ...state, routing: { [SHARD]: { ...r, created: Boolean(prev?.created || r.primary) } } };
  }

  /** shard-started: a replica finished recovering from the primary. */
  applyStartedShard(state, allocationId) {
    const r = state.routing[SHARD];
    if (!r) return null;
    const replica = r.replicas.find((x) => x.allocationId === allocationId && x.state === 'INITIALIZING');
    if (!replica) return null;
    const replicas = r.replicas.map((x) => (x === replica ? { ...x, state: 'STARTED' } : x));
    return { ...state, routing: { [SHARD]: { ...r, replicas, inSync: [...r.inSync, allocationId] } } };
  }

  /** shard-failed: a copy is removed from the routing table and from the in-sync set. */
  applyFailedShard(state, allocationId) {
    const r = state.routing[SHARD];
    if (!r || !r.replicas.some((x) => x.allocationId === allocationId)) return null;
    const replicas = r.replicas.filter((x) => x.allocationId !== allocationId);
    return { ...state, routing: { [SHARD]: { ...r, replicas, inSync: r.inSync.filter((id) => id !== allocationId) } } };
  }
}
