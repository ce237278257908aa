// transport_replication_action.js — the write path, after Elasticsearch's
// TransportReplicationAction, IndexShard, PeerRecoveryTargetService and
// ShardStateAction (node side). A write goes to the node holding the primary
// (indices:data/write/index), which indexes it with the next sequence number and
// sends it to every assigned replica (indices:data/write/index[r]); an active copy
// writes every operation to the node's disk (gateway/gateway_allocator.js). A replica that
// does not answer in time is reported to the master as failed
// (internal:cluster/shard/failure) so that it leaves the in-sync set. A new replica
// copies the primary's documents (internal:index/shard/recovery/start_recovery)
// and then reports itself started (internal:cluster/shard/started). When the
// node closes, requests still waiting for an answer fail with NodeClosedException.

import { SHARD } from '../cluster/allocation_service.js';

export class IndexShard {
  /** @param {string} allocationId @param {boolean} primary @param {import('../gateway/gateway_allocator.js').ShardStore} store the node's copy on disk */
  constructor(allocationId, primary, store) {
    this.allocationId = allocationId;
    this.primary = primary;
    this.store = store;
    /** @type {Map<string, { v: any, seqNo: number }>} */
    this.docs = new Map();
    this.maxSeqNo = 0;
    this.recovering = true;
  }

  /** Applies an operation; an active copy writes it to disk before it is acknowledged. */
  index(id, v, seqNo) {
    const cur = this.docs.get(id);
    if (!cur || cur.seqNo < seqNo) this.docs.set(id, { v, seqNo });
    this.maxSeqNo = Math.max(this.maxSeqNo, seqNo);
    if (!this.recovering) this.store.persist(this);
  }

  /** The copy is active (a primary, or a replica whose recovery finished): it is written to disk from now on. */
  activate() {
    this.recovering = false;
    this.store.persist(this);
  }
}

class NodeClosedException extends Error {
  constructor() {
    super('node closed');
    this.name = 'NodeClosedException';
  }
}

export class ShardStateAction {
  /** @param {DDBench.NodeRuntime} rt @param {() => string | null} master */
  constructor(rt, master) {
    this.rt = rt;
    this.master = master;
    this.timeoutMs = Number(rt.config.shardStateTimeoutMs ?? 800);
    this.seq = 0;
    /** @type {Map<number, { resolve(): void, reject(e: Error): void, timer: any }>} */
    this.pending = new Map();
    this.closed = false;
  }

  /** The cluster service closes with the node: requests waiting on the master fail, later ones too. */
  close() {
    this.closed = true;
    for (const p of this.pending.values()) {
      p.timer.cancel();
      p.reject(new NodeClosedException());
    }
    this.pending.clear();
  }

  /** Asks the master to fail a shard copy; resolves once the master has removed it. */
  shardFailed(allocationId, reason) {
    return this.#send('internal:cluster/shard/failure', { allocationId, reason });
  }

  shardStarted(allocationId) {
    return this.#send('internal:cluster/shard/started', { allocationId });
  }

  #send(type, body) {
    const master = this.master();
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new NodeClosedException());
      if (!master) return reject(new Error('no master'));
      const timer = this.rt.setTimer(this.timeoutMs, () => {
        this.pending.delete(id);
        reject(new Error(`${type} to ${master} timed out`));
      });
      this.pending.set(id, { resolve, reject, timer });
      this.rt.send(master, type, { ...body, id });
    });
  }

  onResponse(body) {
    const p = this.pending.get(body.id);
    if (!p) return;
    this.pending.delete(body.id);
    p.timer.cancel();
    if (body.ok) p.resolve();
    else p.reject(new Error(body.error ?? 'rejected'));
  }
}

export class TransportReplicationAction {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {{ state(): any, shard(): IndexShard | null, shardStateAction: ShardStateAction }} node
   */
  constructor(rt, node) {
    this.rt = rt;
    this.node = node;
    this.replicaTimeoutMs = Number(rt.config.replicaTimeoutMs ?? 400);
    this.seq = 0;
    /** @type {Map<number, (ok: boolean) => void>} replica requests waiting for an answer */
    this.pending = new Map();
  }

  /** On the primary: index, replicate, answer. */
  performOnPrimary(req, reply) {
    const shard = this.node.shard();
    const routing = this.node.state().routing[SHARD];
    if (!shard || !shard.primary || routing?.primary?.allocationId !== shard.allocationId) {
      return reply({ ok: false, error: 'ShardNotFoundException', errmsg: 'this node does not hold the primary' });
    }
    const seqNo = shard.maxSeqNo + 1;
    shard.index(req.id, req.doc, seqNo);
    this.rt.log.info('indexed on primary', { id: req.id, seqNo });
    const replicas = routing.replicas;
    let outstanding = replicas.length + 1;
    let failure = null;
    const done = (err = null) => {
      failure ??= err;
      if (--outstanding > 0) return;
      if (failure) reply({ ok: false, error: 'ReplicationFailedException', errmsg: failure });
      else reply({ ok: true, id: req.id, seqNo, primary: this.rt.id });
    };
    for (const replica of replicas) {
      this.sendToReplica(replica, { id: req.id, doc: req.doc, seqNo }, (res) => {
        if (res.ok) return done();
        if (res.error === 'stale primary') return done(`replica ${replica.node} knows a newer primary`);
        // A copy still recovering gets this operation from the primary's snapshot.
        if (replica.state === 'INITIALIZING') return done();
        this.rt.log.warn('replica failed to index, failing it', { id: req.id, replica: replica.node, allocationId: replica.allocationId, error: res.error });
        this.node.shardStateAction.shardFailed(replica.allocationId, 'failed to perform index on replica').then(
          () => done(),
          (e) => done(`could not fail replica ${replica.node}: ${e.message}`),
        );
      });
    }
    done();
  }

  sendToReplica(replica, op, cb) {
    const reqId = ++this.seq;
    const timer = this.rt.setTimer(this.replicaTimeoutMs, () => {
      if (this.pending.delete(reqId)) cb({ ok: false, error: 'timeout' });
    });
    this.pending.set(reqId, (res) => {
      timer.cancel();
      cb(res);
    });
    this.rt.send(replica.node, 'indices:data/write/index[r]', { ...op, allocationId: replica.allocationId, reqId });
  }

  /** The transport closes with the node: replica requests still in flight fail. */
  close() {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const cb of waiting) cb({ ok: false, error: 'NodeClosedException' });
  }

  onReplicaResponse(body) {
    const cb = this.pending.get(body.reqId);
    if (!cb) return;
    this.pending.delete(body.reqId);
    cb(body);
  }

  /** On a replica: apply the primary's operation. */
  performOnReplica(from, op) {
    const shard = this.node.shard();
    const routing = this.node.state().routing[SHARD];
    let res = { ok: true };
    if (routing?.primary && routing.primary.node !== from) res = { ok: false, error: 'stale primary' };
    else if (!shard || shard.primary || shard.allocationId !== op.allocationId) res = { ok: false, error: 'ShardNotFoundException' };
    else shard.index(op.id, op.doc, op.seqNo);
    this.rt.send(from, 'indices:data/write/index[r]Resp', { reqId: op.reqId, ...res });
  }
}
