// partition.js — after Kafka's Partition and ReplicaManager: one replica of
// the partition on this broker. As leader it appends produced records with its
// leader epoch (transactional ones with their producer id and epoch) and the
// transaction markers the coordinator writes, serves follower fetches and
// consumer fetches (read_uncommitted up to the high watermark, read_committed up
// to the last stable offset), tracks each follower's log end offset to move the
// high watermark, answers acks=all produces once the high watermark passes
// them, and shrinks or expands the ISR. As follower it hands the partition to
// the ReplicaFetcherThread.

import { Log } from './log.js';
import { ReplicaFetcherThread } from './fetcher.js';

export const PARTITION = 'events-0';

export class Partition {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    const c = rt.config;
    this.replicaLagTimeMaxMs = Number(c.replicaLagTimeMaxMs ?? 3000);
    this.fetchMaxWaitMs = Number(c.fetchMaxWaitMs ?? 300);
    this.requestTimeoutMs = Number(c.replicaSocketTimeoutMs ?? 1000);
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
    /** @type {Map<string, (res: any) => void>} transaction verifications awaiting the coordinator, by reqId */
    this.pendingVerifications = new Map();
    /** @type {Map<number, object>} producer id → the guard of its latest verification; a marker removes it */
    this.verificationGuards = new Map();
    this.verifySeq = 0;
    this.fetcher = new ReplicaFetcherThread(rt, this);
  }

  isLeader() {
    return this.leaderReplicaIdOpt === this.rt.id;
  }

  // ---- LeaderAndIsr ----------------------------------------------------------------

  becomeLeaderOrFollower({ leader, leaderEpoch, isr, replicas }) {
    if (leaderEpoch < this.leaderEpoch) return; // stale controller request
    if (replicas) this.replicas = [...replicas];
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

  /** StopReplica: the broker no longer hosts the partition; with deletePartition its copy is deleted. */
  stopReplica({ leaderEpoch, deletePartition }) {
    if (leaderEpoch <= this.leaderEpoch) {
      this.rt.log.warn('ignoring stale StopReplica', { leaderEpoch, localLeaderEpoch: this.leaderEpoch });
      return;
    }
    this.fetcher.removePartition();
    this.failDelayed('NOT_LEADER_FOR_PARTITION');
    this.rt.log.info('stopping replica', { leaderEpoch, oldEpoch: this.leaderEpoch, deletePartition: deletePartition === true, logEndOffset: this.log.logEndOffset() });
    this.leaderReplicaIdOpt = null;
    this.leaderEpoch = leaderEpoch;
    this.isr = [];
    if (deletePartition === true) {
      this.log.truncateTo(0);
      this.highWatermark = 0;
      this.log.checkpointHighWatermark(0);
    }
  }

  failDelayed(error) {
    for (const p of this.delayedProduces) p.done({ ok: false, error });
    this.delayedProduces = [];
    for (const f of this.delayedFetches) f.timer.cancel();
    this.delayedFetches = [];
  }

  // ---- leader side ------------------------------------------------------------------

  /** A Produce: `key, value`, and for a transactional producer `transactionalId, producerId, producerEpoch`. */
  appendRecordsToLeader(req, done) {
    if (!this.isLeader()) return done({ ok: false, error: 'NOT_LEADER_FOR_PARTITION', leader: this.leaderReplicaIdOpt });
    const rec = { epoch: this.leaderEpoch, key: String(req.key), value: String(req.value ?? '') };
    if (req.producerId === undefined || req.producerId === null) return this.appendToLeader(rec, done);
    const txnRec = { ...rec, producerId: Number(req.producerId), producerEpoch: Number(req.producerEpoch) };
    const ps = this.log.producerState;
    if ((ps.producerEpochs.get(txnRec.producerId) ?? -1) > txnRec.producerEpoch) return done({ ok: false, error: 'INVALID_PRODUCER_EPOCH' });
    if (!ps.ongoingTxns.has(txnRec.producerId)) return this.verifyTransaction(String(req.transactionalId), txnRec, done);
    this.appendToLeader(txnRec, done);
  }

  /** Asks the coordinator whether the producer's transaction is ongoing and holds this partition, then appends. */
  verifyTransaction(transactionalId, rec, done) {
    const { producerId, producerEpoch } = rec;
    // Produces racing to open the same transaction share one guard.
    const guard = this.verificationGuards.get(producerId) ?? {};
    this.verificationGuards.set(producerId, guard);
    const reqId = `${this.rt.id}-v${++this.verifySeq}`;
    const finish = (res) => {
      if (!this.pendingVerifications.delete(reqId)) return;
      timer.cancel();
      if (!res.ok) return done({ ok: false, error: res.error });
      if (!this.isLeader()) return done({ ok: false, error: 'NOT_LEADER_FOR_PARTITION', leader: this.leaderReplicaIdOpt });
      // A marker written while the coordinator was asked ended the transaction it vouched for.
      if (this.verificationGuards.get(producerId) !== guard) return done({ ok: false, error: 'INVALID_TXN_STATE' });
      this.appendToLeader({ ...rec, epoch: this.leaderEpoch }, done);
    };
    const timer = this.rt.setTimer(this.requestTimeoutMs, () => finish({ ok: false, error: 'REQUEST_TIMED_OUT' }));
    this.pendingVerifications.set(reqId, finish);
    this.rt.send(this.controllerId(), 'AddPartitionsToTxn', { reqId, transactionalId, producerId, producerEpoch, partitions: [PARTITION], verifyOnly: true });
  }

  onVerification(res) {
    this.pendingVerifications.get(String(res.reqId))?.(res);
  }

  /** The coordinator's COMMIT or ABORT marker for a producer's transaction. */
  writeTxnMarker(req, done) {
    if (!this.isLeader()) return done({ ok: false, error: 'NOT_LEADER_FOR_PARTITION', leader: this.leaderReplicaIdOpt });
    const producerId = Number(req.producerId);
    this.verificationGuards.delete(producerId);
    this.rt.log.info('writing transaction marker', { producerId, producerEpoch: req.producerEpoch, commit: req.commit === true, offset: this.log.logEndOffset() });
    this.appendToLeader({ epoch: this.leaderEpoch, key: '', value: '', producerId, producerEpoch: Number(req.producerEpoch), control: req.commit === true ? 'COMMIT' : 'ABORT' }, done);
  }

  appendToLeader(record, done) {
    if (this.isr.length < this.minInsyncReplicas()) return done({ ok: false, error: 'NOT_ENOUGH_REPLICAS', isr: this.isr });
    const [rec] = this.log.append([record]);
    this.delayedProduces.push({ offset: rec.offset, done: (res) => done({ ...res, offset: rec.offset }) });
    this.maybeIncrementHighWatermark();
    this.wakeFetches();
  }

  /** The offset below which every transaction has ended: the high watermark, or the start of the earliest open transaction. */
  lastStableOffset() {
    const first = this.log.producerState.firstUnstableOffset();
    return first === null ? this.highWatermark : Math.min(first, this.highWatermark);
  }

  /** A fetch from a follower (replicaId) or a consumer (no replicaId). */
  fetch(from, body, reply) {
    if (!this.isLeader()) return reply({ ok: false, error: 'NOT_LEADER_FOR_PARTITION', leader: this.leaderReplicaIdOpt });
    const epochError = this.checkCurrentLeaderEpoch(body.currentLeaderEpoch);
    if (epochError) return reply({ ok: false, error: epochError, leaderEpoch: this.leaderEpoch });
    const offset = Number(body.offset);
    const leo = this.log.logEndOffset();
    if (offset > leo || offset < 0) return reply({ ok: false, error: 'OFFSET_OUT_OF_RANGE', logEndOffset: leo });
    if (body.replicaId) this.updateFollowerFetchState(body.replicaId, offset);
    const upTo = body.replicaId ? leo : body.isolationLevel === 'read_committed' ? this.lastStableOffset() : this.highWatermark;
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
    reply({ ok: true, records, highWatermark: this.highWatermark, lastStableOffset: this.lastStableOffset(), logEndOffset: leo, abortedTransactions: this.log.producerState.abortedIn(offset, upTo) });
  }

  answerFetch(f) {
    if (!this.isLeader()) return f.reply({ ok: false, error: 'NOT_LEADER_FOR_PARTITION', leader: this.leaderReplicaIdOpt });
    const epochError = this.checkCurrentLeaderEpoch(f.body.currentLeaderEpoch);
    if (epochError) return f.reply({ ok: false, error: epochError, leaderEpoch: this.leaderEpoch });
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

  /** The high watermark moves only while the ISR has min.insync.replicas members. */
  maybeIncrementHighWatermark() {
    if (!this.isLeader() || this.isr.length < this.minInsyncReplicas()) return;
    let hw = this.log.logEndOffset();
    for (const id of this.isr) if (id !== this.rt.id) hw = Math.min(hw, this.remoteReplicas.get(id)?.logEndOffset ?? -1);
    if (hw > this.highWatermark) {
      this.highWatermark = hw;
      const ready = this.delayedProduces.filter((p) => p.offset < hw);
      this.delayedProduces = this.delayedProduces.filter((p) => p.offset >= hw);
      for (const p of ready) p.done({ ok: true });
    }
  }

  lastOffsetForLeaderEpoch(epoch, currentLeaderEpoch) {
    if (!this.isLeader()) return { ok: false, error: 'NOT_LEADER_FOR_PARTITION' };
    const epochError = this.checkCurrentLeaderEpoch(currentLeaderEpoch);
    if (epochError) return { ok: false, error: epochError, leaderEpoch: this.leaderEpoch };
    const { epoch: leaderEpoch, endOffset } = this.log.leaderEpochCache.endOffsetFor(epoch, this.log.logEndOffset());
    return { ok: true, leaderEpoch, endOffset };
  }

  /**
   * A replica's request names the leader epoch it knows (KIP-320): an older one is
   * FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH (this broker has not heard of
   * it yet). Consumers send none.
   */
  checkCurrentLeaderEpoch(currentLeaderEpoch) {
    if (currentLeaderEpoch === undefined || currentLeaderEpoch === null) return null;
    if (currentLeaderEpoch < this.leaderEpoch) return 'FENCED_LEADER_EPOCH';
    if (currentLeaderEpoch > this.leaderEpoch) return 'UNKNOWN_LEADER_EPOCH';
    return null;
  }

  controllerId() {
    return String(this.rt.config.controller ?? 'controller');
  }

  minInsyncReplicas() {
    return Number(this.rt.config.minInsyncReplicas ?? 1);
  }
}
