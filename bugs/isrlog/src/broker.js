// broker.js — after Kafka's KafkaServer and KafkaApis: registers with the
// controller and keeps its session alive with heartbeats, routes requests to
// the partition (Produce with acks=all, Fetch from followers and consumers,
// OffsetsForLeaderEpoch, LeaderAndIsr and StopReplica from the controller, WriteTxnMarkers from
// the transaction coordinator), checks the ISR,
// and checkpoints the high watermark every hwCheckpointMs.

import { Partition } from './partition.js';

export class KafkaServer {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    const c = rt.config;
    this.heartbeatMs = Number(c.heartbeatMs ?? 100);
    this.hwCheckpointMs = Number(c.hwCheckpointMs ?? 2000);
    this.isrCheckMs = Number(c.isrCheckMs ?? 200);
    this.logFlushIntervalMs = Number(c.logFlushIntervalMs ?? 0);
    this.controller = String(c.controller ?? 'controller');
    this.incarnation = Math.floor(rt.random() * 2 ** 32).toString(16);
    this.partition = new Partition(rt);
  }

  start() {
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => this.status());
    const p = this.partition;
    this.rt.log.info('broker started', { logEndOffset: p.log.logEndOffset(), highWatermark: p.highWatermark, latestEpoch: p.log.leaderEpochCache.latestEpoch() });
    const every = (ms, fn) => {
      const loop = () => {
        fn();
        this.rt.setTimer(ms, loop);
      };
      loop();
    };
    every(this.heartbeatMs, () => this.rt.send(this.controller, 'BrokerHeartbeat', { incarnation: this.incarnation }));
    every(this.isrCheckMs, () => p.maybeShrinkIsr());
    this.rt.setTimer(this.hwCheckpointMs, () => every(this.hwCheckpointMs, () => p.log.checkpointHighWatermark(p.highWatermark)));
    // With a flush interval the log is flushed that often instead of at every append.
    if (this.logFlushIntervalMs > 0) {
      p.log.flushOnAppend = false;
      this.rt.setTimer(this.logFlushIntervalMs, () => every(this.logFlushIntervalMs, () => p.log.flush()));
    }
  }

  onMessage({ from, type, body }) {
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: req.reqId ?? null, ...res });
    const p = this.partition;
    switch (type) {
      case 'LeaderAndIsr':
        if (from === this.controller) p.becomeLeaderOrFollower(req);
        return;
      case 'StopReplica':
        if (from === this.controller) p.stopReplica(req);
        return;
      case 'FetchResp':
      case 'OffsetsForLeaderEpochResp':
        return p.fetcher.onResponse(from, type, req);
      case 'Fetch':
        return p.fetch(from, req, reply);
      case 'OffsetsForLeaderEpoch':
        return reply(p.lastOffsetForLeaderEpoch(Number(req.epoch), req.currentLeaderEpoch));
      case 'Produce':
        return p.appendRecordsToLeader(req, reply);
      case 'WriteTxnMarkers':
        return p.writeTxnMarker(req, reply);
      case 'AddPartitionsToTxnResp':
        return p.onVerification(req);
      case 'Status':
        return reply({ ok: true, ...this.brief() });
      default:
        return reply({ ok: false, error: `unknown request ${type}` });
    }
  }

  brief() {
    const p = this.partition;
    return {
      id: this.rt.id,
      role: p.isLeader() ? 'leader' : p.leaderReplicaIdOpt ? 'follower' : 'none',
      leader: p.leaderReplicaIdOpt,
      leaderEpoch: p.leaderEpoch,
      isr: p.isLeader() ? p.isr : null,
      logEndOffset: p.log.logEndOffset(),
      recoveryPoint: p.log.recoveryPoint,
      highWatermark: p.highWatermark,
      lastStableOffset: p.lastStableOffset(),
    };
  }

  status() {
    const log = this.partition.log;
    return {
      ...this.brief(),
      epochs: log.leaderEpochCache.epochs,
      digest: log.digest(),
      records: log.records.length <= 1000 ? log.records.map((r) => [r.offset, r.epoch, r.key, r.value, r.producerId ?? null, r.control ?? null]) : null,
      openTransactions: Object.fromEntries(log.producerState.ongoingTxns),
    };
  }
}
