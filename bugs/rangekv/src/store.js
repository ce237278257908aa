// store.js — one node's store, after CockroachDB's kvserver.Store: it holds a
// replica of every range, routes raft messages to them, and ticks them. Raft
// messages leave in one RaftMessageBatch per destination per tick (the raft
// transport), stamped with the sender's clock reading, which the receiver's
// HLC is forwarded to — as every RPC header carries it.
//
// A split (AdminSplit, proposed through the left-hand range's log) creates the
// right-hand range's replica on each store as the store applies it; all
// replicas of a store share its engine, as CockroachDB's replicas share one
// Pebble instance and TiKV's regions one RocksDB.
//
// Clients talk to any store: TxnBegin takes a timestamp from this store's
// clock (the gateway); reads, writes and EndTxn go to the range's leaseholder,
// and any other store answers NotLeaseHolderError naming the leader it knows.

import { Clock, fmt } from './hlc.js';
import { Engine } from './mvcc.js';
import { Replica } from './replica.js';

/** The ranges every store starts with: [start, end) spans of the keyspace. */
const RANGES = [
  { rangeId: 1, start: '', end: 'm' },
  { rangeId: 2, start: 'm', end: '\uffff' },
];

export class Store {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.clock = new Clock(() => rt.now());
    this.tickMs = Number(rt.config.tickMs ?? 25);
    /** @type {Map<string, Array<{ rangeId: number, type: string, body: any }>>} */
    this.outbox = new Map();
    this.engine = new Engine();
    /** @type {Replica[]} ordered by rangeId */
    this.replicas = RANGES.map((d) => this.newReplica({ ...d, generation: 1 }));
    this.txnSeq = 0;
    /** Ticks since this store started (a steady clock; rt.now() is wall-clock time and may jump). */
    this.ticks = 0;
  }

  start() {
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => this.state());
    this.rt.log.info('store started', { ranges: this.replicas.map((r) => ({ range: r.desc.rangeId, lastIndex: r.raft.lastIndex(), term: r.raft.term })) });
    const loop = () => {
      this.ticks++;
      for (const r of this.replicas) r.tick();
      this.flush();
      this.rt.setTimer(this.tickMs, loop);
    };
    this.rt.setTimer(this.tickMs, loop);
  }

  newReplica(desc) {
    return new Replica(this.rt, desc, this.clock, this.engine, {
      send: (to, rangeId, type, body) => this.queue(to, rangeId, type, body),
      split: (right, campaign) => this.splitApplied(right, campaign),
      uptimeTicks: () => this.ticks,
    });
  }

  /** The left-hand range applied a split: create the right-hand replica (its raft state may be on disk from before a restart). */
  splitApplied(right, campaign) {
    if (this.replica(right.rangeId)) return;
    const r = this.newReplica(right);
    this.replicas.push(r);
    this.replicas.sort((a, b) => a.desc.rangeId - b.desc.rangeId);
    // As CockroachDB's maybeCampaignAfterSplit: the left's leader campaigns at once for the right.
    if (campaign) r.raft.campaign(false);
  }

  queue(to, rangeId, type, body) {
    let q = this.outbox.get(to);
    if (!q) this.outbox.set(to, (q = []));
    q.push({ rangeId, type, body });
  }

  flush() {
    if (this.outbox.size === 0) return;
    const ts = this.clock.peek();
    for (const [to, msgs] of this.outbox) this.rt.send(to, 'RaftMessageBatch', { ts, msgs });
    this.outbox.clear();
  }

  replica(rangeId) {
    return this.replicas.find((r) => r.desc.rangeId === rangeId);
  }

  replicaFor(key) {
    return this.replicas.find((r) => r.containsKey(key));
  }

  onMessage({ from, type, body }) {
    if (this.rt.nodes.includes(from)) {
      if (type !== 'RaftMessageBatch') return;
      this.clock.update(body.ts);
      for (const m of body.msgs) this.replica(m.rangeId)?.step(from, m.type, m.body);
      return;
    }
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: req.reqId ?? null, ...res });
    switch (type) {
      case 'Status':
        return reply({ ok: true, id: this.rt.id, clock: fmt(this.clock.peek()), ranges: this.replicas.map((r) => r.status()) });
      case 'TxnBegin': {
        const txn = { id: `${this.rt.id}-${++this.txnSeq}`, ts: this.clock.now() };
        this.rt.log.info('txn begin', { txn: txn.id, ts: fmt(txn.ts) });
        return reply({ ok: true, txn });
      }
      case 'Get': {
        const r = this.replicaFor(String(req.key));
        return req.follower ? r.followerRead(String(req.key), reply) : r.get(String(req.key), reply);
      }
      case 'Put':
        return this.replicaFor(String(req.key)).put(String(req.key), String(req.value), reply);
      case 'Scan': {
        const r = this.replicaFor(String(req.start));
        if (!r.containsKey(String(req.end)) && String(req.end) !== r.desc.end) return reply({ ok: false, error: 'scan spans more than one range' });
        return r.scan(req.txn, String(req.start), String(req.end), reply);
      }
      case 'EndTxn': {
        const writes = (req.writes ?? []).map((w) => ({ key: String(w.key), value: String(w.value) }));
        const r = this.replicaFor(writes[0]?.key ?? '');
        if (writes.some((w) => !r.containsKey(w.key))) return reply({ ok: false, error: 'writes span more than one range' });
        return r.endTxn(req.txn, req.reads ?? [], writes, reply);
      }
      case 'AdminSplit': {
        const key = String(req.key);
        const rightId = Math.max(...this.replicas.map((r) => r.desc.rangeId)) + 1;
        return this.replicaFor(key).adminSplit(key, rightId, reply);
      }
      case 'TransferLease':
        return reply(this.replica(Number(req.rangeId))?.transferLease(String(req.target)) ?? { ok: false, error: 'unknown range' });
      default:
        return reply({ ok: false, error: `unknown request ${type}` });
    }
  }

  state() {
    return { id: this.rt.id, clock: fmt(this.clock.peek()), ranges: this.replicas.map((r) => r.state()) };
  }
}
