// server.js — the member, after etcd's etcdserver: client requests become raft
// proposals, committed entries are applied to the mvcc store, the lessor and
// the lock service, and the member that took a request answers it once its
// entry is applied. Reads go through the log too, so they are linearizable.

import { Backend } from './backend.js';
import { KVStore } from './kvstore.js';
import { Lessor } from './lease.js';
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
    this.raft = new Raft(rt, new WAL(rt.disk), {
      onCommit: () => this.applyAll(),
      onStateChange: () => this.onStateChange(),
    });
    this.leaseCheckMs = Number(rt.config.leaseCheckMs ?? 100);
    this.appliedIndex = 0;
    this.reqSeq = 0;
    /** @type {Map<string, (result: any) => void>} proposals waiting for their entry to apply */
    this.wait = new Map();
    /** @type {Set<number>} leases with a revoke in flight */
    this.revoking = new Set();
  }

  start() {
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => this.status());
    this.rt.log.info('member started', { consistentIndex: this.kv.consistentIndex(), revision: this.kv.rev });
    this.raft.start();
    this.be.run();
    const leaseLoop = () => {
      this.revokeExpiredLeases();
      this.rt.setTimer(this.leaseCheckMs, leaseLoop);
    };
    this.rt.setTimer(this.leaseCheckMs, leaseLoop);
    this.applyAll();
  }

  onMessage({ from, type, body }) {
    if (this.rt.nodes.includes(from)) {
      if (type.startsWith('Msg')) this.raft.step(from, type, body);
      return;
    }
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: req.reqId ?? null, ...res });
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
      case 'Lock':
        return this.propose((res) => this.lockWait(reply, res), { op: 'lock', name: String(req.name), lease: Number(req.lease) });
      case 'Unlock':
        return this.propose(reply, { op: 'deleteRange', keys: [String(req.key)] });
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

  propose(done, req) {
    if (!this.raft.isLeader()) return done(this.notLeader());
    const id = `${this.rt.id}.${this.raft.term}.${++this.reqSeq}`;
    const p = this.raft.propose({ header: { id }, ...req });
    if (!p) return done({ ok: false, error: 'leader transferring', leader: this.raft.lead || null });
    this.wait.set(id, done);
  }

  lockWait(reply, res) {
    if (!res.ok) return reply(res);
    this.locks.wait(res.name, res.key, res.rev, reply);
  }

  leaseKeepAlive(reply, id) {
    if (!this.raft.isLeader()) return reply(this.notLeader());
    const ttl = this.lessor.renew(id);
    if (ttl < 0) return reply({ ok: false, error: 'lease not found' });
    reply({ ok: true, id, ttl });
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
    const waiting = [...this.wait.values()];
    this.wait.clear();
    for (const done of waiting) done({ ok: false, error: 'leader changed', leader: this.raft.lead || null });
  }

  // ---- apply ---------------------------------------------------------------

  applyAll() {
    while (this.appliedIndex < this.raft.commit) {
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
    this.rt.log.info('applied', { term: ent.term, index: ent.index, op: req.op, key: req.key ?? req.keys?.[0] ?? req.name ?? null, ok: result.ok });
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
      case 'leaseRevoke': {
        const keys = this.lessor.revoke(req.id);
        this.rt.log.info('lease revoked', { lease: req.id, keys });
        return { ok: true };
      }
      case 'lock':
        return { ...this.locks.applyLock(req), name: req.name };
      default:
        return { ok: false, error: `unknown op ${req.op}` };
    }
  }

  // ---- state -----------------------------------------------------------------

  brief() {
    const r = this.raft;
    return {
      id: this.rt.id,
      role: r.state,
      term: r.term,
      leader: r.lead || null,
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
