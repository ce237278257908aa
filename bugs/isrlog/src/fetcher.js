// fetcher.js — after Kafka's ReplicaFetcherThread (AbstractFetcherThread): a
// follower first reconciles its log with the leader's — it asks for the end
// offset of its latest leader epoch (OffsetsForLeaderEpoch, KIP-101, KIP-279);
// the leader answers with the largest epoch it has at or below that one and
// where it ends, and the follower truncates to where both logs agree — and then
// fetches from its log end offset, appending what it gets and taking the
// leader's high watermark. Both requests carry the leader epoch the follower
// knows (KIP-320). Errors back off for fetchBackoffMs; a request unanswered for
// replicaSocketTimeoutMs counts as an error.

import { UNDEFINED_EPOCH, UNDEFINED_OFFSET } from './log.js';

export class ReplicaFetcherThread {
  /** @param {any} rt @param {import('./partition.js').Partition} partition */
  constructor(rt, partition) {
    this.rt = rt;
    this.partition = partition;
    const c = rt.config;
    this.fetchBackoffMs = Number(c.fetchBackoffMs ?? 200);
    this.socketTimeoutMs = Number(c.replicaSocketTimeoutMs ?? 1000);
    this.fetchMaxWaitMs = Number(c.fetchMaxWaitMs ?? 300);
    this.leader = null;
    this.leaderEpoch = -1;
    /** idle → truncating → fetching */
    this.state = 'idle';
    this.inFlight = null;
    this.seq = 0;
    this.backoffTimer = null;
  }

  addPartition(leader, leaderEpoch) {
    this.leader = leader;
    this.leaderEpoch = leaderEpoch;
    this.state = 'truncating';
    this.backoffTimer?.cancel();
    this.doWork();
  }

  removePartition() {
    this.leader = null;
    this.state = 'idle';
    this.backoffTimer?.cancel();
  }

  doWork() {
    if (this.inFlight || this.state === 'idle') return;
    const reqId = `${this.rt.id}-f${++this.seq}`;
    const log = this.partition.log;
    const to = this.leader;
    // The partition's leader epoch on this broker: the latest LeaderAndIsr it applied.
    const leaderEpoch = this.partition.leaderEpoch;
    this.inFlight = { reqId, to, leaderEpoch };
    this.inFlight.timer = this.rt.setTimer(this.socketTimeoutMs, () => {
      if (this.inFlight?.reqId !== reqId) return;
      this.inFlight = null;
      this.backoff();
    });
    if (this.state === 'truncating') {
      this.rt.send(to, 'OffsetsForLeaderEpoch', { reqId, currentLeaderEpoch: leaderEpoch, epoch: log.leaderEpochCache.latestEpoch() });
    } else {
      this.rt.send(to, 'Fetch', { reqId, replicaId: this.rt.id, currentLeaderEpoch: leaderEpoch, offset: log.logEndOffset(), maxWaitMs: this.fetchMaxWaitMs });
    }
  }

  backoff() {
    this.backoffTimer?.cancel();
    this.backoffTimer = this.rt.setTimer(this.fetchBackoffMs, () => this.doWork());
  }

  onResponse(from, type, body) {
    if (!this.inFlight || this.inFlight.reqId !== body.reqId) return;
    this.inFlight.timer.cancel();
    const { to: sentTo, leaderEpoch: sentEpoch } = this.inFlight;
    this.inFlight = null;
    if (this.state === 'idle') return;
    if (sentTo !== this.leader || sentEpoch !== this.partition.leaderEpoch) return this.doWork();
    if (body.error === 'FENCED_LEADER_EPOCH') return this.onPartitionFenced();
    const log = this.partition.log;
    if (type === 'OffsetsForLeaderEpochResp') {
      if (this.state !== 'truncating') return this.doWork();
      if (!body.ok) return this.backoff();
      if (body.endOffset === UNDEFINED_OFFSET) {
        this.truncate(this.partition.highWatermark, 'high watermark');
      } else {
        const own = log.leaderEpochCache.endOffsetFor(body.leaderEpoch, log.logEndOffset());
        if (own.epoch !== body.leaderEpoch) {
          // The leader never had the epochs above own.epoch: drop them and ask again from there.
          this.truncate(own.epoch === UNDEFINED_EPOCH ? 0 : own.endOffset, 'leader epoch');
          return this.doWork();
        }
        this.truncate(Math.min(body.endOffset, own.endOffset), 'leader epoch');
      }
      this.state = 'fetching';
      return this.doWork();
    }
    if (this.state !== 'fetching') return this.doWork();
    if (!body.ok) {
      if (body.error === 'OFFSET_OUT_OF_RANGE' && body.logEndOffset < log.logEndOffset()) {
        this.truncate(body.logEndOffset, 'leader log end');
        return this.doWork();
      }
      return this.backoff();
    }
    log.append(body.records);
    this.partition.highWatermark = Math.min(body.highWatermark, log.logEndOffset());
    this.doWork();
  }

  /** The leader has a newer epoch than this follower was told of: wait for the controller's LeaderAndIsr. */
  onPartitionFenced() {
    this.rt.log.warn('fetcher fenced by a newer leader epoch; awaiting LeaderAndIsr', { leader: this.leader, leaderEpoch: this.leaderEpoch });
    this.state = 'idle';
  }

  truncate(offset, reason) {
    const log = this.partition.log;
    if (offset >= log.logEndOffset()) return;
    this.rt.log.info('truncating log', { reason, from: log.logEndOffset(), to: offset, leader: this.leader, leaderEpoch: this.leaderEpoch });
    log.truncateTo(offset);
    this.partition.highWatermark = Math.min(this.partition.highWatermark, offset);
  }
}
