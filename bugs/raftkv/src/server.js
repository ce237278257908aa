// server.js — the member, after etcd's etcdserver: client requests become raft
// proposals, committed entries are applied to the mvcc store, the lessor and
// the lock service, and the member that took a request answers it once its
// entry is applied. Reads go through the log too, so they are linearizable.
// Membership changes are ConfChange entries: applied on commit, they change
// the member list and raft's configuration; a member that applies its own
// removal stops.

import { Backend } from './backend.js';
import { KVStore } from './kvstore.js';
import { Lessor } from './lease.js';
import { RaftCluster } from './membership.js';
import { LockServer } from './v3lock.js';
import { Raft } from './raft.js';
import { WAL } from './wal.js';

export class EtcdServer {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.be = new Backend(rt);
    this.kv = new KVStore(this.be);
    this.lessor = new Lessor(rt, this.be, this.kv);
    this.locks = new LockServer(rt, this.kv, this.lessor);
    const initial = Array.isArray(rt.config.initialCluster) ? rt.config.initialCluster.map(String) : rt.nodes;
    this.cluster = new RaftCluster(this.be, initial);
    this.raft = new Raft(rt, new WAL(rt.disk), {
      onCommit: () => this.applyAll(),
      onStateChange: () => this.onStateChange(),
    }, this.cluster.list());
    this.heartbeatMs = Number(rt.config.heartbeatMs ?? 100);
    this.leaseCheckMs = Number(rt.config.leaseCheckMs ?? 100);
    this.appliedIndex = 0;
    this.reqSeq = 0;
    /** @type {Map<string, (result: any) => void>} proposals waiting for their entry to apply */
    this.wait = new Map();
    /** @type {Set<number>} leases with a revoke in flight */
    this.revoking = new Set();
    /** index of the last ConfChange proposed by this member as leader */
    this.pendingConfIndex = 0;
    this.stopped = false;
  }

  start() {
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => this.status());
    this.rt.log.info('member started', { consistentIndex: this.kv.consistentIndex(), revision: this.kv.rev, members: this.cluster.list() });
    if (this.cluster.isRemoved(this.rt.id)) return this.stop('the member has been permanently removed from the cluster');
    this.raft.start();
    this.be.run();
    const leaseLoop = () => {
      this.revokeExpiredLeases();
      this.checkpointLeases();
      this.rt.setTimer(this.leaseCheckMs, leaseLoop);
    };
    this.rt.setTimer(this.leaseCheckMs, leaseLoop);
    this.applyAll();
  }

  onMessage({ from, type, body }) {
    if (this.rt.nodes.includes(from)) {
      if (this.stopped) return;
      if (type === 'MsgRemoved') return this.stop('the member has been permanently removed from the cluster');
      if (this.cluster.isRemoved(from)) {
        // Like rafthttp's answer to a removed peer: it learns it is out and stops.
        this.rt.send(from, 'MsgRemoved', {});
        return;
      }
      if (type.startsWith('Msg')) this.raft.step(from, type, body);
      return;
    }
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: req.reqId ?? null, ...res });
    if (this.stopped) return reply({ ok: false, error: 'member removed' });
    switch (type) {
      case 'Status':
        return reply({ ok: true, ...this.brief() });
      case 'Put':
        return this.propose(reply, { op: 'put', key: String(req.key), value: String(req.value), lease: Number(req.lease ?? 0) });
      case 'Get':
        return this.propose(reply, { op: 'range', key: req.key ?? null, prefix: req.prefix ?? null });
      case 'Delete':
        return this.propose(reply, { op: 'deleteRange', keys: [String(req.key)] });
      case 'LeaseGrant': {
        const id = 1 + Math.floor(this.rt.random() * 2 ** 40);
        return this.propose(reply, { op: 'leaseGrant', id, ttl: Number(req.ttl) });
      }
      case 'LeaseKeepAlive':
        return this.leaseKeepAlive(reply, Number(req.id));
      case 'LeaseTimeToLive':
        return this.leaseTimeToLive(reply, Number(req.id));
      case 'Lock':
        return this.propose((res) => this.lockWait(reply, res), { op: 'lock', name: String(req.name), lease: Number(req.lease) });
      case 'Unlock':
        return this.propose(reply, { op: 'deleteRange', keys: [String(req.key)] });
      case 'MemberList':
        return reply({ ok: true, members: this.cluster.list() });
      case 'MemberAdd':
        return this.proposeConfChange(reply, 'add', String(req.id));
      case 'MemberRemove':
        return this.proposeConfChange(reply, 'remove', String(req.id));
      case 'TransferLeader': {
        const err = this.raft.transferLeader(String(req.target));
        return reply(err ? { ok: false, error: err, leader: this.raft.lead || null } : { ok: true });
      }
      default:
        return reply({ ok: false, error: `unknown request ${type}` });
    }
  }

  notLeader() {
    return { ok: false, error: 'not leader', leader: this.raft.lead || null };
  }

  /** Proposes req and answers done once it is applied; returns the entry's { index, term }, or null if refused. */
  propose(done, req) {
    if (!this.raft.isLeader()) {
      done(this.notLeader());
      return null;
    }
    const id = `${this.rt.id}.${this.raft.term}.${++this.reqSeq}`;
    // Registered first: a member alone in its configuration commits and applies within propose.
    this.wait.set(id, done);
    const p = this.raft.propose({ header: { id }, ...req });
    if (!p) {
      this.wait.delete(id);
      done({ ok: false, error: 'leader transferring', leader: this.raft.lead || null });
    }
    return p;
  }

  /** MemberAdd/MemberRemove: one ConfChange at a time, as etcd's raft allows. */
  proposeConfChange(reply, change, node) {
    if (!this.raft.isLeader()) return reply(this.notLeader());
    if (!this.rt.nodes.includes(node)) return reply({ ok: false, error: 'unknown node' });
    if (this.cluster.isRemoved(node)) return reply({ ok: false, error: 'member removed' });
    if (change === 'add' && this.cluster.isMember(node)) return reply({ ok: false, error: 'member exists' });
    if (change === 'remove' && !this.cluster.isMember(node)) return reply({ ok: false, error: 'member not found' });
    if (this.pendingConfIndex > this.appliedIndex) return reply({ ok: false, error: 'conf change pending' });
    const p = this.propose(reply, { op: 'confChange', change, node });
    if (p) this.pendingConfIndex = p.index;
  }

  lockWait(reply, res) {
    if (!res.ok) return reply(res);
    this.locks.wait(res.name, res.key, res.rev, reply);
  }

  leaseKeepAlive(reply, id) {
    if (!this.raft.isLeader()) return reply(this.notLeader());
    const ttl = this.lessor.renew(id);
    if (ttl < 0) return reply({ ok: false, error: 'lease not found' });
    // A renewed lease no longer counts down from its checkpoint; at most one entry per checkpoint.
    if (this.lessor.checkpointed(id)) this.propose(() => {}, { op: 'leaseCheckpoint', checkpoints: [{ id, remainingTtl: 0 }] });
    reply({ ok: true, id, ttl });
  }

  leaseTimeToLive(reply, id) {
    if (!this.raft.isLeader()) return reply(this.notLeader());
    const t = this.lessor.timeToLive(id);
    if (!t) return reply({ ok: false, error: 'lease not found' });
    reply({ ok: true, id, ...t });
  }

  checkpointLeases() {
    if (!this.raft.isLeader()) return;
    const checkpoints = this.lessor.dueCheckpoints();
    if (checkpoints.length > 0) this.propose(() => {}, { op: 'leaseCheckpoint', checkpoints });
  }

  revokeExpiredLeases() {
    if (!this.raft.isLeader()) return;
    for (const id of this.lessor.expired()) {
      if (this.revoking.has(id)) continue;
      this.rt.log.info('lease expired', { term: this.raft.term, lease: id });
      this.revoking.add(id);
      this.propose(() => this.revoking.delete(id), { op: 'leaseRevoke', id });
    }
  }

  onStateChange() {
    if (this.raft.isLeader()) {
      this.lessor.promote();
      return;
    }
    this.lessor.demote();
    this.revoking.clear();
    this.pendingConfIndex = 0;
    const waiting = [...this.wait.values()];
    this.wait.clear();
    for (const done of waiting) done({ ok: false, error: 'leader changed', leader: this.raft.lead || null });
  }

  // ---- apply ---------------------------------------------------------------

  applyAll() {
    while (!this.stopped && this.appliedIndex < this.raft.commit) {
      const ent = this.raft.entry(this.appliedIndex + 1);
      this.applyEntry(ent);
      this.appliedIndex = ent.index;
    }
    this.locks.progress();
  }

  applyEntry(ent) {
    if (ent.index <= this.kv.consistentIndex()) return; // already in the backend
    const req = ent.data;
    const result = this.applyRequest(req);
    this.kv.setConsistentIndex(ent.index);
    this.rt.log.info('applied', { term: ent.term, index: ent.index, op: req.op, key: req.key ?? req.keys?.[0] ?? req.name ?? req.node ?? null, ok: result.ok });
    const done = this.wait.get(req.header.id);
    if (done) {
      this.wait.delete(req.header.id);
      done(result);
    }
  }

  applyRequest(req) {
    switch (req.op) {
      case 'put': {
        if (req.lease && !this.lessor.has(req.lease)) return { ok: false, error: 'lease not found' };
        const kv = this.kv.put(req.key, req.value, req.lease);
        return { ok: true, rev: kv.modRevision };
      }
      case 'range': {
        const kvs = req.key !== null ? [this.kv.get(req.key)].filter(Boolean) : this.kv.range(req.prefix ?? '');
        const found = kvs.length > 0;
        return { ok: true, rev: this.kv.rev, found, value: found ? kvs[0].value : null, kvs };
      }
      case 'deleteRange':
        return { ok: true, deleted: this.kv.deleteKeys(req.keys) };
      case 'leaseGrant':
        this.lessor.grant(req.id, req.ttl);
        return { ok: true, id: req.id, ttl: req.ttl };
      case 'leaseCheckpoint':
        for (const cp of req.checkpoints) this.lessor.checkpoint(cp.id, cp.remainingTtl);
        return { ok: true };
      case 'leaseRevoke': {
        const keys = this.lessor.revoke(req.id);
        this.rt.log.info('lease revoked', { lease: req.id, keys });
        return { ok: true };
      }
      case 'lock':
        return { ...this.locks.applyLock(req), name: req.name };
      case 'confChange':
        return this.applyConfChange(req);
      default:
        return { ok: false, error: `unknown op ${req.op}` };
    }
  }

  applyConfChange(req) {
    if (req.change === 'add') this.cluster.addMember(req.node);
    else this.cluster.removeMember(req.node);
    this.raft.applyConfChange(this.cluster.list());
    this.rt.log.info('member list changed', { change: req.change, node: req.node, members: this.cluster.list() });
    if (req.change === 'remove' && req.node === this.rt.id) {
      // Keep raft running a while, so the others learn that the removal committed.
      this.rt.setTimer(10 * this.heartbeatMs, () => this.stop('the member has been permanently removed from the cluster'));
    }
    return { ok: true, members: this.cluster.list() };
  }

  stop(reason) {
    if (this.stopped) return;
    this.rt.log.warn('member stopped', { reason });
    this.raft.stop();
    this.stopped = true;
  }

  // ---- state -----------------------------------------------------------------

  brief() {
    const r = this.raft;
    return {
      id: this.rt.id,
      role: r.state,
      term: r.term,
      leader: r.lead || null,
      members: this.cluster.list(),
      commitIndex: r.commit,
      appliedIndex: this.appliedIndex,
    };
  }

  status() {
    const r = this.raft;
    const keys = this.kv.range('');
    return {
      ...this.brief(),
      vote: r.vote || null,
      consistentIndex: this.kv.consistentIndex(),
      logLength: r.lastIndex(),
      lastLog: { index: r.lastIndex(), term: r.lastTerm() },
      revision: this.kv.rev,
      kvHash: this.kv.hash(),
      keyCount: keys.length,
      kv: keys.length <= 1000 ? Object.fromEntries(keys.map((kv) => [kv.key, kv.value])) : null,
      leases: this.lessor.list(),
      locks: this.locks.list(),
    };
  }
}
