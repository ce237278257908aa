// replica.js — one store's replica of a range, after CockroachDB's
// kvserver.Replica: the raft group, the MVCC data of the range's span, and on
// the leaseholder the timestamp cache and the latches that serialize
// conflicting requests. The raft leader holds the range lease (a leader
// lease, as TiKV's): it serves reads and evaluates writes while a quorum has
// answered it within leaseMs and it is not handing its leadership away.
//
// Follower reads use ReadIndex (after TiKV's peer.rs): the follower asks the
// leader for a read index, waits until it has applied that far, and reads
// locally. The leader answers at once while its lease holds and it has
// committed an entry of its own term; otherwise the request waits until it has.
//
// Splits (after CockroachDB's AdminSplit and TiKV's split): the leaseholder
// proposes the split through the range's log; applying it shrinks the range's
// descriptor to the left-hand side, bumps its generation, and hands the
// right-hand side to the store, which creates the new range's replica over the
// same data.
//
// Transactions (after CockroachDB's TxnCoordSender, simplified): a txn reads
// at its timestamp and sends its writes with EndTxn. A write must land above
// every other transaction's read of its key (the timestamp cache); if that
// pushes the txn's timestamp, its reads are refreshed up to the new timestamp,
// and it retries when something was written there in between.

import { fmt, less, equal, next } from './hlc.js';
import { RawNode, StateLeader } from './raft.js';
import { TimestampCache } from './tscache.js';

const keyEnd = (key) => key + '\u0000';

export class Replica {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {{ rangeId: number, start: string, end: string, generation: number }} desc
   * @param {import('./hlc.js').Clock} clock
   * @param {import('./mvcc.js').Engine} engine the store's engine
   * @param {{ send: (to: string, rangeId: number, type: string, body: any) => void, split: (right: { rangeId: number, start: string, end: string, generation: number }, campaign: boolean) => void, uptimeTicks: () => number }} store
   */
  constructor(rt, desc, clock, engine, { send, split, uptimeTicks }) {
    this.rt = rt;
    this.desc = desc;
    this.clock = clock;
    const tickMs = Number(rt.config.tickMs ?? 25);
    const [lo] = Array.isArray(rt.config.electionTimeoutMs) ? rt.config.electionTimeoutMs : [1200];
    this.leaseMs = Number(rt.config.leaseMs ?? Math.floor(Number(lo) * 0.8));
    this.raft = new RawNode(rt, desc.rangeId, { electionTicks: Math.ceil(Number(lo) / tickMs), heartbeatTicks: Math.ceil(Number(rt.config.heartbeatMs ?? 50) / tickMs) }, (to, type, body) =>
      send(to, desc.rangeId, type, body),
    );
    this.engine = engine;
    this.splitTo = split;
    this.uptimeTicks = uptimeTicks;
    this.applied = 0;
    this.tsCache = null;
    /** @type {Map<string, { term: number, at: number }>} when each peer last answered a leader of ours, and in which term */
    this.lastAck = new Map();
    /** @type {Map<number, (res: any) => void>} */
    this.waiting = new Map();
    /** @type {Array<(release: () => void) => void>} requests waiting for the latch */
    this.latchQueue = [];
    this.latched = false;
    this.wasLeader = false;
    /** The raft state as of the last ready (TiKV's PeerStorage raft_state). */
    this.raftState = { commit: 0 };
    /** @type {Array<{ from: string, ctx: string }>} read index requests waiting on the leader */
    this.pendingReadIndex = [];
    /** @type {Map<string, { key: string, reply: (res: any) => void, sentTo: string | null, index: number | null, generation: number }>} */
    this.followerReads = new Map();
    this.readSeq = 0;
    this.send = (to, type, body) => send(to, desc.rangeId, type, body);
  }

  containsKey(key) {
    return this.desc.start <= key && key < this.desc.end;
  }

  // ---- raft ----------------------------------------------------------------

  step(from, type, body) {
    if (type === 'MsgReadIndex') return this.onReadIndex(from, body.ctx);
    if (type === 'MsgReadIndexResp') return this.onReadIndexResp(body);
    if ((type === 'MsgAppResp' || type === 'MsgHeartbeatResp') && body.term === this.raft.term) this.lastAck.set(from, { term: body.term, at: this.rt.now() });
    if (type === 'MsgVote' && !body.force && this.uptimeTicks() < this.raft.cfg.electionTicks) {
      // A store that just started does not know whether some leader's lease, renewed by this very
      // store before it went down, is still running: it grants no vote for an election timeout
      // (TiKV raftstore's check against the node start time).
      this.rt.log.info('ignored vote: store started within an election timeout', { range: this.desc.rangeId, from, term: body.term });
      return;
    }
    this.raft.step(from, type, body);
  }

  /** Called every tick: drive the raft group, apply committed entries, and notice a change of leaseholder. */
  tick() {
    this.raft.tick();
    this.handleRaftReady();
  }

  handleRaftReady() {
    const r = this.raft;
    this.raftState.commit = r.committed;
    while (this.applied < r.committed) {
      const e = r.entry(this.applied + 1);
      this.applied = e.index;
      this.applyCommand(e);
    }
    const leader = r.state === StateLeader;
    if (!leader && this.wasLeader) this.loseLease();
    if (leader) this.leaseValid();
    this.wasLeader = leader;
    this.progressReads();
  }

  applyCommand(e) {
    const cmd = e.data;
    if (cmd.op === 'split') this.applySplit(cmd);
    if (cmd.op === 'write') {
      for (const w of cmd.writes) this.engine.mvccPut(w.key, cmd.ts, w.value);
      this.rt.log.info('applied', { range: this.desc.rangeId, index: e.index, ts: fmt(cmd.ts), keys: cmd.writes.map((w) => w.key), txn: cmd.txnID ?? null });
    }
    const done = this.waiting.get(e.index);
    if (done) {
      this.waiting.delete(e.index);
      done({ ok: true });
    }
  }

  applySplit({ splitKey, rightId }) {
    const generation = this.desc.generation + 1;
    const right = { rangeId: rightId, start: splitKey, end: this.desc.end, generation };
    this.desc = { ...this.desc, end: splitKey, generation };
    this.rt.log.info('applied split', { range: this.desc.rangeId, left: [this.desc.start, splitKey], right: rightId, generation });
    this.splitTo(right, this.raft.state === StateLeader);
  }

  // ---- the lease -------------------------------------------------------------

  /** The leader lease: a quorum answered this leader within leaseMs, and it is not handing over. */
  inLease() {
    const r = this.raft;
    if (r.state !== StateLeader || r.leadTransferee) return false;
    const now = this.rt.now();
    let fresh = 1;
    for (const a of this.lastAck.values()) if (a.term === r.term && now - a.at < this.leaseMs) fresh++;
    return fresh >= r.quorum;
  }

  /** Whether this replica may serve and evaluate requests: in lease, and applied up to its own term. */
  leaseValid() {
    const r = this.raft;
    if (!this.inLease() || r.termAt(this.applied) !== r.term) return false;
    if (!this.tsCache) {
      // A new lease: reads served under the previous one are unknown here.
      this.tsCache = new TimestampCache(this.clock.now());
      this.rt.log.info('acquired lease', { range: this.desc.rangeId, term: r.term, lowWater: fmt(this.tsCache.lowWater) });
    }
    return true;
  }

  loseLease() {
    this.tsCache = null;
    for (const p of this.pendingReadIndex) this.send(p.from, 'MsgReadIndexResp', { ctx: p.ctx, reject: true });
    this.pendingReadIndex = [];
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const done of waiting) done({ ok: false, error: 'NotLeaseHolderError', leader: this.raft.lead || null });
  }

  /** A request for keys this range no longer holds (it split after the client routed it). */
  keyMismatch(key) {
    return this.containsKey(key) ? null : { ok: false, error: 'RangeKeyMismatchError', range: this.desc.rangeId, span: [this.desc.start, this.desc.end] };
  }

  notLeaseHolder() {
    return { ok: false, error: 'NotLeaseHolderError', leader: this.raft.lead || null, range: this.desc.rangeId };
  }

  // ---- read index ------------------------------------------------------------

  onReadIndex(from, ctx) {
    const r = this.raft;
    if (r.state !== StateLeader) return this.send(from, 'MsgReadIndexResp', { ctx, reject: true });
    if (this.inLease() && r.termAt(this.raftState.commit) === r.term) {
      return this.send(from, 'MsgReadIndexResp', { ctx, index: this.raftState.commit });
    }
    this.pendingReadIndex.push({ from, ctx });
  }

  onReadIndexResp({ ctx, index, reject }) {
    const w = this.followerReads.get(ctx);
    if (!w) return;
    if (reject) w.sentTo = null;
    else w.index = index;
  }

  /** Answers waiting read index requests (leader) and serves follower reads that may go ahead. */
  progressReads() {
    const r = this.raft;
    if (this.pendingReadIndex.length && this.inLease() && r.committedToCurrentTerm()) {
      for (const p of this.pendingReadIndex) this.send(p.from, 'MsgReadIndexResp', { ctx: p.ctx, index: r.committed });
      this.pendingReadIndex = [];
    }
    for (const [ctx, w] of this.followerReads) {
      if (w.index === null) {
        // Without a leader the request may have been lost: send it again to the next one (TiKV retries pending reads after an election).
        if (!r.lead) w.sentTo = null;
        if (r.lead && r.lead !== this.rt.id && w.sentTo !== r.lead) {
          w.sentTo = r.lead;
          this.send(r.lead, 'MsgReadIndex', { ctx });
        }
        continue;
      }
      if (this.applied < w.index) continue;
      this.followerReads.delete(ctx);
      if (w.generation !== this.desc.generation) {
        // The range split or changed since the read was registered: its data may now be another range's.
        this.rt.log.info('follower read epoch not match', { range: this.desc.rangeId, key: w.key, generation: this.desc.generation });
        w.reply({ ok: false, error: 'EpochNotMatch', range: this.desc.rangeId });
        continue;
      }
      const v = this.engine.mvccGet(w.key, { wall: Infinity, logical: 0 });
      this.rt.log.info('follower read', { range: this.desc.rangeId, key: w.key, readIndex: w.index, applied: this.applied, value: v?.value ?? null });
      w.reply({ ok: true, found: v !== null, value: v?.value ?? null, readIndex: w.index });
    }
  }

  /** A read served by this replica, whether or not it holds the lease, through ReadIndex. */
  followerRead(key, reply) {
    if (this.raft.state === StateLeader) return this.get(key, reply);
    this.followerReads.set(`${this.rt.id}.${++this.readSeq}`, { key, reply, sentTo: null, index: null, generation: this.desc.generation });
  }

  // ---- latches -------------------------------------------------------------

  /** Runs fn(release) once no earlier request holds the latch. */
  withLatch(fn) {
    this.latchQueue.push(fn);
    this.runLatched();
  }

  runLatched() {
    if (this.latched || this.latchQueue.length === 0) return;
    this.latched = true;
    const fn = this.latchQueue.shift();
    let released = false;
    fn(() => {
      if (released) return;
      released = true;
      this.latched = false;
      this.runLatched();
    });
  }

  /** Proposes a write command and calls done once it applied (or the lease was lost). */
  proposeWrite(cmd, done) {
    const index = this.raft.propose(cmd);
    if (!index) return done(this.notLeaseHolder());
    this.waiting.set(index, done);
  }

  // ---- requests ------------------------------------------------------------

  get(key, reply) {
    this.withLatch((release) => {
      if (!this.leaseValid()) return release(), reply(this.notLeaseHolder());
      const mismatch = this.keyMismatch(key);
      if (mismatch) return release(), reply(mismatch);
      const ts = this.clock.now();
      const v = this.engine.mvccGet(key, ts);
      this.tsCache.add(key, keyEnd(key), ts, null);
      release();
      reply({ ok: true, found: v !== null, value: v?.value ?? null, ts: fmt(ts) });
    });
  }

  put(key, value, reply) {
    this.withLatch((release) => {
      if (!this.leaseValid()) return release(), reply(this.notLeaseHolder());
      const mismatch = this.keyMismatch(key);
      if (mismatch) return release(), reply(mismatch);
      let ts = this.clock.now();
      const read = this.tsCache.getMax(key, keyEnd(key));
      if (!less(read.ts, ts)) ts = next(read.ts);
      const latest = this.engine.latest(key);
      if (latest && !less(latest, ts)) ts = next(latest);
      this.proposeWrite({ op: 'write', ts, writes: [{ key, value }] }, (res) => {
        release();
        reply(res.ok ? { ok: true, ts: fmt(ts) } : res);
      });
    });
  }

  scan(txn, start, end, reply) {
    this.withLatch((release) => {
      if (!this.leaseValid()) return release(), reply(this.notLeaseHolder());
      const mismatch = this.keyMismatch(start) ?? (end > this.desc.end ? this.keyMismatch(end) : null);
      if (mismatch) return release(), reply(mismatch);
      this.clock.update(txn.ts);
      const rows = this.engine.mvccScan(start, end, txn.ts);
      this.tsCache.add(start, end, txn.ts, txn.id);
      release();
      reply({ ok: true, rows });
    });
  }

  endTxn(txn, reads, writes, reply) {
    this.withLatch((release) => {
      if (!this.leaseValid()) return release(), reply(this.notLeaseHolder());
      const mismatch = writes.map((w) => this.keyMismatch(w.key)).find(Boolean);
      if (mismatch) return release(), reply(mismatch);
      this.clock.update(txn.ts);
      // Every write lands above other transactions' reads and above existing versions.
      let commitTs = txn.ts;
      for (const w of writes) {
        const read = this.tsCache.getMax(w.key, keyEnd(w.key));
        if (less(commitTs, read.ts) || (equal(commitTs, read.ts) && read.txnID !== txn.id)) commitTs = next(read.ts);
        const latest = this.engine.latest(w.key);
        if (latest && !less(latest, commitTs)) commitTs = next(latest);
      }
      if (!equal(commitTs, txn.ts)) {
        // Pushed: the reads stay valid only if nothing was written over them in between.
        const stale = reads.find(([s, e]) => this.engine.hasWriteIn(s, e, txn.ts, commitTs));
        this.rt.log.info('txn pushed', { range: this.desc.rangeId, txn: txn.id, from: fmt(txn.ts), to: fmt(commitTs), refreshed: !stale });
        if (stale) {
          release();
          return reply({ ok: false, error: 'TransactionRetryError', reason: 'RETRY_SERIALIZABLE', txn: txn.id });
        }
        for (const [s, e] of reads) this.tsCache.add(s, e, commitTs, txn.id);
      }
      this.proposeWrite({ op: 'write', ts: commitTs, txnID: txn.id, writes }, (res) => {
        release();
        if (res.ok) this.rt.log.info('txn committed', { range: this.desc.rangeId, txn: txn.id, ts: fmt(commitTs), keys: writes.map((w) => w.key) });
        reply(res.ok ? { ok: true, commitTs: fmt(commitTs) } : res);
      });
    });
  }

  /** Splits the range at splitKey through its log; the latch keeps requests evaluated before it from landing after it. */
  adminSplit(splitKey, rightId, reply) {
    this.withLatch((release) => {
      if (!this.leaseValid()) return release(), reply(this.notLeaseHolder());
      if (splitKey <= this.desc.start || !this.containsKey(splitKey)) return release(), reply({ ok: false, error: 'split key outside the range', span: [this.desc.start, this.desc.end] });
      this.proposeWrite({ op: 'split', splitKey, rightId }, (res) => {
        release();
        reply(res.ok ? { ok: true, left: this.desc.rangeId, right: rightId } : res);
      });
    });
  }

  transferLease(target) {
    if (!this.raft.transferLeader(target)) return { ok: false, error: this.raft.state === StateLeader ? 'unknown store' : 'NotLeaseHolderError', leader: this.raft.lead || null };
    return { ok: true };
  }

  status() {
    const r = this.raft;
    return {
      rangeId: this.desc.rangeId,
      span: [this.desc.start, this.desc.end],
      generation: this.desc.generation,
      role: r.state,
      term: r.term,
      leader: r.lead || null,
      leaseValid: r.state === StateLeader ? this.leaseValid() : false,
      electionElapsed: r.electionElapsed,
      electionTimeout: r.randomizedElectionTimeout,
      commit: r.committed,
      applied: this.applied,
      lastIndex: r.lastIndex(),
    };
  }

  state() {
    return { ...this.status(), data: this.engine.dump(this.desc.start, this.desc.end), tsCache: this.tsCache?.list() ?? null };
  }
}

