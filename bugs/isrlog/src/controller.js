// controller.js — after Kafka's KafkaController (with the partition state it
// keeps in ZooKeeper): it tracks broker sessions by heartbeat, elects the
// partition leader from the live ISR (no unclean election), bumps the leader
// epoch on every leader or controller-side ISR change, and sends LeaderAndIsr
// to the replicas. Leaders report ISR shrink/expand with AlterIsr. An admin
// may move leadership to another in-sync replica (ElectLeaders) and change the
// partition's replicas (AlterPartitionReassignments): a removed replica gets
// StopReplica, which deletes its copy of the partition. The node also hosts
// the transaction coordinator (coordinator.js).
//
// After KIP-966, replicas that leave an ISR smaller than min.insync.replicas
// stay eligible leader replicas (ELR): the high watermark cannot move while the
// ISR is that small, so they hold every committed record. A partition with no
// live ISR member is led by a live eligible leader replica; a broker that comes
// back from a crash (an unclean shutdown) is no longer one.

import { TransactionCoordinator } from './coordinator.js';

const STATE = 'partition-state';

export class KafkaController {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    const c = rt.config;
    this.sessionTimeoutMs = Number(c.sessionTimeoutMs ?? 3000);
    this.minInsyncReplicas = Number(c.minInsyncReplicas ?? 1);
    const replicas = /** @type {string[]} */ (c.replicas ?? rt.nodes.filter((n) => n !== rt.id));
    /** @type {Map<string, { incarnation: string, lastSeen: number, alive: boolean }>} */
    this.brokers = new Map();
    const saved = rt.disk.read(STATE);
    /** @type {{ leader: string | null, leaderEpoch: number, isr: string[], replicas: string[], elr: string[] }} */
    this.state = saved ? JSON.parse(saved) : { leader: null, leaderEpoch: -1, isr: [...replicas], replicas: [...replicas], elr: [] };
    this.txnCoordinator = new TransactionCoordinator(rt, () => this.state.leader);
  }

  start() {
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => ({ id: this.rt.id, role: 'controller', ...this.state, liveBrokers: this.live() }));
    this.rt.log.info('controller started', { ...this.state });
    const loop = () => {
      this.checkSessions();
      this.rt.setTimer(100, loop);
    };
    this.rt.setTimer(100, loop);
    this.txnCoordinator.start();
  }

  live() {
    return [...this.brokers].filter(([, b]) => b.alive).map(([id]) => id);
  }

  persist() {
    this.rt.disk.write(STATE, JSON.stringify(this.state));
    this.rt.disk.sync();
  }

  onMessage({ from, type, body }) {
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: req.reqId ?? null, ...res });
    switch (type) {
      case 'BrokerHeartbeat':
        return this.heartbeat(from, String(req.incarnation));
      case 'AlterIsr':
        return this.alterIsr(from, req);
      case 'Metadata':
      case 'Status':
        return reply({ ok: true, id: this.rt.id, role: 'controller', ...this.state, liveBrokers: this.live() });
      case 'ElectLeaders': {
        const target = String(req.broker);
        if (!this.state.isr.includes(target) || !this.brokers.get(target)?.alive) return reply({ ok: false, error: 'ELIGIBLE_LEADERS_NOT_AVAILABLE', ...this.state });
        if (this.state.leader !== target) this.elect(target, this.state.isr, 'admin election');
        return reply({ ok: true, ...this.state });
      }
      case 'AlterPartitionReassignments':
        return reply(this.reassign(/** @type {string[]} */ (req.replicas ?? [])));
      default:
        if (!this.txnCoordinator.handle(type, req, reply)) reply({ ok: false, error: `unknown request ${type}` });
    }
  }

  heartbeat(broker, incarnation) {
    const b = this.brokers.get(broker);
    const now = this.rt.now();
    if (b && b.alive && b.incarnation === incarnation) {
      b.lastSeen = now;
      return;
    }
    // A new incarnation is a broker that went down without a clean shutdown.
    const restarted = b !== undefined && b.incarnation !== incarnation;
    this.brokers.set(broker, { incarnation, lastSeen: now, alive: true });
    this.rt.log.info('broker registered', { broker, incarnation });
    this.onBrokerStartup(broker, restarted);
  }

  onBrokerStartup(broker, restarted) {
    if (!this.state.replicas.includes(broker)) return;
    if (restarted) this.onUncleanShutdown(broker);
    if (this.state.leader === null && this.state.isr.includes(broker)) {
      const live = this.state.isr.filter((r) => this.brokers.get(r)?.alive);
      return this.elect(broker, live, 'offline partition');
    }
    if (this.state.leader === null && this.state.elr.includes(broker)) return this.elect(broker, [broker], 'offline partition, eligible leader replica');
    if (this.state.leader !== null) this.sendLeaderAndIsr([broker]);
  }

  /**
   * A broker back from a crash may have lost records it had not flushed: it is no longer an
   * eligible leader replica, and while the partition is offline and eligible leader replicas
   * are left to wait for, it leaves the ISR too.
   */
  onUncleanShutdown(broker) {
    const elr = this.state.elr.filter((r) => r !== broker);
    const isr = this.state.leader === null && elr.length ? this.state.isr.filter((r) => r !== broker) : this.state.isr;
    if (elr.length === this.state.elr.length && isr.length === this.state.isr.length) return;
    this.state = { ...this.state, isr, elr };
    this.persist();
    this.rt.log.info('unclean shutdown: broker no longer eligible to lead', { broker, isr, elr });
  }

  checkSessions() {
    const now = this.rt.now();
    const dead = [];
    for (const [id, b] of this.brokers) {
      if (b.alive && now - b.lastSeen > this.sessionTimeoutMs) {
        b.alive = false;
        dead.push(id);
      }
    }
    if (dead.length) this.onBrokerFailure(dead);
  }

  onBrokerFailure(dead) {
    this.rt.log.info('broker session expired', { brokers: dead });
    const liveIsr = this.state.isr.filter((r) => !dead.includes(r) && this.brokers.get(r)?.alive);
    if (this.state.leader !== null && dead.includes(this.state.leader)) {
      if (liveIsr.length === 0) {
        const eligible = this.state.elr.find((r) => !dead.includes(r) && this.brokers.get(r)?.alive);
        if (eligible) return this.elect(eligible, [eligible], 'leader failure, eligible leader replica');
        this.state = { ...this.state, leader: null };
        this.persist();
        this.rt.log.warn('partition offline', { isr: this.state.isr });
        return;
      }
      return this.elect(liveIsr[0], liveIsr, 'leader failure');
    }
    if (this.state.leader !== null && liveIsr.length !== this.state.isr.length) {
      this.elect(this.state.leader, liveIsr, 'replica failure');
    }
  }

  elect(leader, isr, reason, replicas = this.state.replicas) {
    const elr = this.eligibleLeaderReplicas(isr, replicas);
    this.state = { leader, leaderEpoch: this.state.leaderEpoch + 1, isr: [...isr], replicas: [...replicas], elr };
    this.persist();
    this.rt.log.info('leader elected', { reason, ...this.state });
    this.sendLeaderAndIsr(this.state.replicas.filter((r) => this.brokers.get(r)?.alive));
  }

  /**
   * KIP-966: while the ISR is smaller than min.insync.replicas the high watermark cannot move,
   * so the replicas that left it still hold every committed record and stay eligible to lead.
   */
  eligibleLeaderReplicas(isr, replicas) {
    if (isr.length >= this.minInsyncReplicas) return [];
    const left = [...this.state.elr, ...this.state.isr.filter((r) => !this.state.elr.includes(r))];
    return left.filter((r) => !isr.includes(r) && replicas.includes(r));
  }

  sendLeaderAndIsr(brokers) {
    const { leader, leaderEpoch, isr, replicas } = this.state;
    for (const b of brokers) this.rt.send(b, 'LeaderAndIsr', { leader, leaderEpoch, isr, replicas });
  }

  /**
   * Adds replicas to the partition or removes them from it (one kind of change at a
   * time), with a new leader epoch. A removed replica leaves the ISR, hands over
   * leadership if it led, and gets StopReplica, which deletes its copy.
   */
  reassign(target) {
    const known = this.rt.nodes.filter((n) => n !== this.rt.id);
    const current = this.state.replicas;
    const added = target.filter((r) => !current.includes(r));
    const removed = current.filter((r) => !target.includes(r));
    const invalid = target.length === 0 || new Set(target).size !== target.length || target.some((r) => !known.includes(r)) || (added.length && removed.length);
    if (invalid) return { ok: false, error: 'INVALID_REPLICA_ASSIGNMENT', ...this.state };
    if (!added.length && !removed.length) return { ok: true, ...this.state };
    const isr = this.state.isr.filter((r) => target.includes(r));
    const leader = this.state.leader !== null && target.includes(this.state.leader) ? this.state.leader : isr.find((r) => this.brokers.get(r)?.alive);
    if (!leader) return { ok: false, error: 'ELIGIBLE_LEADERS_NOT_AVAILABLE', ...this.state };
    this.elect(leader, isr, removed.length ? 'replicas removed' : 'replicas added', target);
    for (const r of removed) {
      if (this.brokers.get(r)?.alive) this.rt.send(r, 'StopReplica', { leaderEpoch: this.state.leaderEpoch, deletePartition: true });
    }
    return { ok: true, ...this.state };
  }

  alterIsr(from, req) {
    if (from !== this.state.leader || req.leaderEpoch !== this.state.leaderEpoch) return;
    const isr = req.isr.filter((r) => this.state.replicas.includes(r));
    if (!isr.includes(from)) return;
    this.state = { ...this.state, isr, elr: this.eligibleLeaderReplicas(isr, this.state.replicas) };
    this.persist();
    this.rt.log.info('isr updated', { leader: from, leaderEpoch: this.state.leaderEpoch, isr, elr: this.state.elr });
  }
}
