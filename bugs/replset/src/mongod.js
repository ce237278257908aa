// mongod.js — one replica set member, after mongo/db/mongod_main and the
// command layer: it owns the oplog and the collection the oplog is applied to,
// serves client commands (insert, find, isMaster, replSetGetStatus), and hands
// member-to-member messages to the replication coordinator and the background
// sync. Everything outside the process comes through `rt`.

import { BackgroundSync } from './repl/bgsync.js';
import { compareOpTime, opTimeOf } from './repl/optime.js';
import { PRIMARY, ReplicationCoordinator } from './repl/replication_coordinator.js';
import { StorageInterface } from './repl/storage.js';

export class Mongod {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.storage = new StorageInterface(rt.disk);
    /** @type {Array<{ ts: number, t: number, op: string, o: any }>} local.oplog.rs, in memory and on disk */
    this.oplog = this.storage.loadOplog();
    /** @type {Map<string, any>} the test.docs collection */
    this.docs = new Map();
    for (const e of this.oplog) this.applyOp(e);
    this.repl = new ReplicationCoordinator(rt, this.storage, this);
    this.bgsync = new BackgroundSync(rt, this.repl, this);
    this.defaultWTimeoutMs = Number(rt.config.wtimeoutMs ?? 5000);
  }

  start() {
    this.rt.onMessage((m) => this.onMessage(m));
    this.rt.exposeState(() => this.serverStatus());
    this.rt.log.info('mongod started', { lastApplied: opTimeOf(this.oplog[this.oplog.length - 1]), docs: this.docs.size, term: this.repl.term });
    this.repl.start();
    this.bgsync.start();
  }

  // ---- the oplog and the collection --------------------------------------------------

  applyOp(e) {
    if (e.op === 'u') this.docs.set(e.o._id, e.o.v);
  }

  /** Primary: writes one oplog entry stamped with our term and the next timestamp. */
  appendLocal(fields) {
    const last = this.oplog[this.oplog.length - 1];
    const ts = Math.max((last?.ts ?? 0) + 1, Math.floor(this.rt.now()));
    const entry = { ts, t: this.repl.term, ...fields };
    this.storage.appendOplog([entry]);
    this.oplog.push(entry);
    this.applyOp(entry);
    this.repl.updateCommitPoint();
    return opTimeOf(entry);
  }

  /** Secondary: appends and applies a batch fetched from the sync source. */
  applyBatch(entries) {
    this.storage.appendOplog(entries);
    for (const e of entries) {
      this.oplog.push(e);
      this.applyOp(e);
    }
  }

  /** Rollback: keeps the first n entries and rebuilds the collection from them. */
  truncateOplogAfter(n) {
    this.oplog.length = n;
    this.storage.replaceOplog(this.oplog);
    this.docs = new Map();
    for (const e of this.oplog) this.applyOp(e);
  }

  /** The newest value of _id at or before the commit point (readConcern "majority"). */
  readCommitted(id) {
    const cp = this.repl.lastCommittedOpTime;
    for (let i = this.oplog.length - 1; i >= 0; i--) {
      const e = this.oplog[i];
      if (compareOpTime(opTimeOf(e), cp) > 0) continue;
      if (e.op === 'u' && e.o._id === id) return e.o.v;
    }
    return undefined;
  }

  // ---- messages ------------------------------------------------------------------------

  onMessage({ from, type, body }) {
    if (this.rt.nodes.includes(from)) return this.onMemberMessage(from, type, body ?? {});
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: req.reqId ?? null, ...res });
    switch (type) {
      case 'insert':
        return this.insert(req, reply);
      case 'find':
        return this.find(req, reply);
      case 'isMaster':
        return reply({ ok: true, ismaster: this.repl.state === PRIMARY, secondary: this.repl.state !== PRIMARY, primary: this.repl.primaryId, term: this.repl.term, me: this.rt.id });
      case 'replSetGetStatus':
        return reply({ ok: true, ...this.brief() });
      default:
        return reply({ ok: false, error: 'CommandNotFound', errmsg: `no such command: ${type}` });
    }
  }

  onMemberMessage(from, type, body) {
    switch (type) {
      case 'replSetHeartbeat':
        return this.repl.onHeartbeat(from, body);
      case 'replSetRequestVotes':
        return this.repl.onRequestVotes(from, body);
      case 'replSetRequestVotesReply':
        return this.repl.onRequestVotesReply(from, body);
      case 'replSetUpdatePosition':
        return this.repl.onUpdatePosition(from, body);
      case 'find':
        return this.bgsync.onFind(from, body);
      case 'findReply':
        return this.bgsync.onFindReply(from, body);
      case 'rollbackOplogQuery':
        return this.bgsync.onRollbackQuery(from, body);
      case 'rollbackOplogReply':
        return this.bgsync.onRollbackReply(from, body);
      default:
        this.rt.log.warn('unknown member message', { from, type });
    }
  }

  /** insert { _id, v, writeConcern: { w: 1 | "majority", wtimeout } } — an upsert of one document. */
  insert(req, reply) {
    if (this.repl.state !== PRIMARY) {
      return reply({ ok: false, error: 'NotWritablePrimary', errmsg: 'not primary', primary: this.repl.primaryId });
    }
    const wc = req.writeConcern ?? {};
    const opTime = this.appendLocal({ op: 'u', o: { _id: String(req._id), v: req.v ?? null } });
    this.rt.log.info('insert', { _id: String(req._id), opTime, w: wc.w ?? 1 });
    if (wc.w !== 'majority') return reply({ ok: true, n: 1, opTime });
    this.repl.awaitReplication(opTime, Number(wc.wtimeout ?? this.defaultWTimeoutMs), (res) => reply({ ...res, n: res.ok ? 1 : 0, opTime }));
  }

  /** find { _id, readConcern: "local" | "majority" | "linearizable" } — one document by _id. */
  find(req, reply) {
    const id = String(req._id);
    if (req.readConcern !== 'linearizable') {
      const v = req.readConcern === 'majority' ? this.readCommitted(id) : this.docs.get(id);
      return reply({ ok: true, found: v !== undefined, v: v ?? null, state: this.repl.state });
    }
    if (this.repl.state !== PRIMARY) {
      return reply({ ok: false, error: 'NotWritablePrimary', errmsg: 'linearizable reads are served by the primary only', primary: this.repl.primaryId });
    }
    const v = this.docs.get(id);
    // The read counts only once a write made after it is majority committed in our term:
    // then no other primary can have taken writes the read missed.
    const opTime = this.appendLocal({ op: 'n', o: { msg: 'linearizable read' } });
    this.repl.awaitReplication(opTime, this.defaultWTimeoutMs, (res) =>
      reply(res.ok ? { ok: true, found: v !== undefined, v: v ?? null, state: this.repl.state } : res),
    );
  }

  brief() {
    const r = this.repl.status();
    return {
      id: this.rt.id,
      state: r.state,
      term: r.term,
      primary: r.primary,
      lastApplied: opTimeOf(this.oplog[this.oplog.length - 1]),
      lastCommittedOpTime: r.lastCommittedOpTime,
      oplogLength: this.oplog.length,
      syncSource: this.bgsync.syncSource,
      rbid: r.rbid,
      docCount: this.docs.size,
    };
  }

  serverStatus() {
    const docs = {};
    let n = 0;
    for (const [k, v] of this.docs) {
      if (n++ >= 1000) break;
      docs[k] = v;
    }
    return { ...this.brief(), lastVote: this.repl.lastVote, members: this.repl.status().members, docs };
  }
}

/** @param {DDBench.NodeRuntime} rt the node runtime */
export function createNode(rt) {
  const mongod = new Mongod(rt);
  return {
    start() {
      mongod.start();
    },
  };
}
