// partition.js — after Kafka's Partition and ReplicaManager: one replica of
// the partition on this broker. As leader it appends produced records with its
// leader epoch, serves follower fetches, tracks each follower's log end offset
// to move the high watermark, answers acks=all produces once the high
// watermark passes them, and shrinks or expands the ISR. As follower it hands
// the partition to the ReplicaFetcherThread.

import { Log } from './log.js';
import { ReplicaFetcherThread } from './fetcher.js';

export class Partition {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    const c = rt.config;
    this.replicaLagTimeMaxMs = Number(c.replicaLagTimeMaxMs ?? 3000);
    this.fetchMaxWaitMs = Number(c.fetchMaxWaitMs ?? 300);
    this.replicas = /** @type {string[]} */ (c.replicas ?? []);
    this.log = new Log(rt.disk);
    this.highWatermark = this.log.readHighWatermarkCheckpoint();
    this.leaderReplicaIdOpt = null;
    this.leaderEpoch = -1;
    this.isr = [];
    /** follower id → { logEndOffset, lastCaughtUpTimeMs } (leader only) */
    this.remoteReplicas = new Map();
    /** @type {Array<{ offset: number, done: (res: any) => void }>} produces waiting for the high watermark */
    this.delayedProduces = [];
    /** @type {Array<{ from: string, body: any, timer: any }>} fetches parked until new data */
    this.delayedFetches = [];
    this.fetcher = new ReplicaFetcherThread(rt, this);
  }

  isLeader() {
    return this.leaderReplicaIdOpt === this.rt.id;
  }

  // ---- LeaderAndIsr ----------------------------------------------------------------

  becomeLeaderOrFollower({ leader, leaderEpoch, isr }) {
    if (leaderEpoch < this.leaderEpoch) return; // stale controller request
    if (leader === this.rt.id) this.makeLeader(leaderEpoch, isr);
    else if (this.makeFollower(leader, leaderEpoch)) this.fetcher.addPartition(leader, leaderEpoch);
  }

  makeLeader(leaderEpoch, isr) {
    const wasLeader = this.isLeader() && this.leaderEpoch === leaderEpoch;
    this.fetcher.removePartition();
    this.leaderReplicaIdOpt = this.rt.id;
    this.leaderEpoch = leaderEpoch;
    this.isr = [...isr];
    if (wasLeader) return;
    const now = this.rt.now();
    this.remoteReplicas = new Map(this.replicas.filter((n) => n !== this.rt.id).map((n) => [n, { logEndOffset: -1, lastCaughtUpTimeMs: now }]));
    this.rt.log.info('became leader', { leaderEpoch, isr: this.isr, logEndOffset: this.log.logEndOffset(), highWatermark: this.highWatermark });
    this.maybeIncrementHighWatermark();
  }

  /** Returns true if the follower must (re)start fetching: the leader changed. */
  makeFollower(leader, leaderEpoch) {
    const oldLeader = this.leaderReplicaIdOpt;
    const oldEpoch = this.leaderEpoch;
    this.leaderReplicaIdOpt = leader;
    this.leaderEpoch = leaderEpoch;
    this.isr = [];
    this.failDelayed('NOT_LEADER_FOR_PARTITION');
    this.rt.log.info('became follower', { leader, leaderEpoch, oldLeader, oldEpoch, logEndOffset: this.log.logEndOffset(), highWatermark: this.highWatermark });
    return oldLeader !== leader || oldEpoch !== leaderEpoch;
  }

  failDelayed(error) {
    for (const p of this.delayedProduces) p.done({ ok: false, error });
    this.delayedProduces = [];
    for (const f of this.delayedFetches) f.timer.cancel();
    this.delayedFetches = [];
  }

  // ---- leader side ------------------------------------------------------------------

  appendRecordsToLeader(key, value, done) {
    if (!this.isLeader()) return done({ ok: false, error: 'NOT_LEADER_FOR_PARTITION', leader: this.leaderReplicaIdOpt });
    const [rec] = this.log.append([{ epoch: this.leaderEpoch, key, value }]);
    this.delayedProduces.push({ offset: rec.offset, done: (res) => done({ ...res, offset: rec.offset }) });
    this.maybeIncrementHighWatermark();
    this.wakeFetches();
  }

  /** A fetch from a follower (replicaId) or a consumer (no replicaId). */
  fetch(from, body, reply) {
    if (!this.isLeader()) return reply({ ok: false, error: 'NOT_LEADER_FOR_PARTITION', leader: this.leaderReplicaIdOpt });
    const offset = Number(body.offset);
    const leo = this.log.logEndOffset();
    if (offset > leo || offset < 0) return reply({ ok: false, error: 'OFFSET_OUT_OF_RANGE', logEndOffset: leo });
    if (body.replicaId) this.updateFollowerFetchState(body.replicaId, offset);
    const upTo = body.replicaId ? leo : this.highWatermark;
    const records = this.log.read(offset, 100, upTo);
    if (records.length === 0 && body.replicaId && body.maxWaitMs > 0) {
      const parked = { from, body, reply, timer: null };
      parked.timer = this.rt.setTimer(Math.min(body.maxWaitMs, this.fetchMaxWaitMs), () => {
        this.delayedFetches = this.delayedFetches.filter((f) => f !== parked);
        this.answerFetch(parked);
      });
      this.delayedFetches.push(parked);
      return;
    }
    reply({ ok: true, records, highWatermark: this.highWatermark, logEndOffset: leo });
  }

  answerFetch(f) {
    if (!this.isLeader()) return f.reply({ ok: false, error: 'NOT_LEADER_FOR_PARTITION', leader: this.leaderReplicaIdOpt });
    const records = this.log.read(Number(f.body.offset), 100);
    f.reply({ ok: true, records, highWatermark: this.highWatermark, logEndOffset: this.log.logEndOffset() });
  }

  wakeFetches() {
    const parked = this.delayedFetches;
    this.delayedFetches = [];
    for (const f of parked) {
      f.timer.cancel();
      this.answerFetch(f);
    }
  }

  updateFollowerFetchState(replicaId, fetchOffset) {
    const r = this.remoteReplicas.get(replicaId);
    if (!r) return;
    r.logEndOffset = fetchOffset;
    if (fetchOffset >= this.log.logEndOffset()) r.lastCaughtUpTimeMs = this.rt.now();
    this.maybeExpandIsr(replicaId);
    this.maybeIncrementHighWatermark();
  }

  maybeExpandIsr(replicaId) {
    const r = this.remoteReplicas.get(replicaId);
    if (this.isr.includes(replicaId) || r.logEndOffset < this.highWatermark) return;
    this.isr = [...this.isr, replicaId];
    this.rt.log.info('expanding ISR', { replica: replicaId, isr: this.isr });
    this.rt.send(this.controllerId(), 'AlterIsr', { leaderEpoch: this.leaderEpoch, isr: this.isr });
  }

  maybeShrinkIsr() {
    if (!this.isLeader()) return;
    const now = this.rt.now();
    const outOfSync = this.isr.filter((id) => id !== this.rt.id && now - this.remoteReplicas.get(id).lastCaughtUpTimeMs > this.replicaLagTimeMaxMs);
    if (outOfSync.length === 0) return;
    this.isr = this.isr.filter((id) => !outOfSync.includes(id));
    this.rt.log.info('shrinking ISR', { outOfSync, isr: this.isr });
    this.rt.send(this.controllerId(), 'AlterIsr', { leaderEpoch: this.leaderEpoch, isr: this.isr });
    this.maybeIncrementHighWatermark();
  }

  maybeIncrementHighWatermark() {
    if (!this.isLeader()) return;
    let hw = this.log.logEndOffset();
    for (const id of this.isr) if (id !== this.rt.id) hw = Math.min(hw, this.remoteReplicas.get(id)?.logEndOffset ?? -1);
    if (hw > this.highWatermark) {
      this.highWatermark = hw;
      const ready = this.delayedProduces.filter((p) => p.offset < hw);
      this.delayedProduces = this.delayedProduces.filter((p) => p.offset >= hw);
      for (const p of ready) p.done({ ok: true });
    }
  }

  lastOffsetForLeaderEpoch(epoch) {
    if (!this.isLeader()) return { ok: false, error: 'NOT_LEADER_FOR_PARTITION' };
    const { epoch: leaderEpoch, endOffset } = this.log.leaderEpochCache.endOffsetFor(epoch, this.log.logEndOffset());
    return { ok: true, leaderEpoch, endOffset };
  }

  controllerId() {
    return String(this.rt.config.controller ?? 'controller');
  }
}
