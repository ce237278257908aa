// memberlist.js — after memberlist's memberlist.go, net.go and
// broadcast.go: creating a member, joining through a push/pull with the
// configured seeds, the probe / gossip / push-pull schedule, graceful leave,
// the wire messages (ping, indirectPing, ack, compound gossip, pushPull) and
// the client RPCs.

import { TransmitLimitedQueue } from './queue.js';
import { StateAlive, StateSuspect, stateMethods } from './state.js';

const DEFAULTS = {
  probeIntervalMs: 1500,
  probeTimeoutMs: 1000,
  indirectChecks: 3,
  suspicionTimeoutMs: 4000,
  gossipIntervalMs: 100,
  gossipNodes: 3,
  gossipToTheDeadMs: 30000,
  pushPullIntervalMs: 30000,
  retransmitMult: 4,
  joinRetryMs: 300,
  leavePropagateMs: 300,
  bindPort: 7946,
  deadNodeReclaimMs: 0,
};

export class Memberlist {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.name = rt.id;
    this.config = { ...DEFAULTS };
    for (const k of Object.keys(DEFAULTS)) if (rt.config[k] !== undefined) this.config[k] = Number(rt.config[k]);
    /** Seeds to join through, tried in order (this member skipped). */
    this.join = /** @type {string[]} */ (rt.config.join ?? rt.nodes).filter((n) => n !== this.name);
    /** @type {Map<string, {name: string, incarnation: number, state: string, stateChange: number}>} */
    this.nodeMap = new Map();
    /** the member list in probe order */
    this.nodes = [];
    this.probeIndex = 0;
    this.seqNo = 0;
    /** @type {Map<number, () => void>} */
    this.ackHandlers = new Map();
    /** @type {Map<string, {cancel(): void}>} */
    this.suspicions = new Map();
    this.broadcasts = new TransmitLimitedQueue(() => this.nodes.length, this.config.retransmitMult);
    this.leaving = false;
    this.joined = false;
    /** The address this member advertises (host:port), chosen at start. */
    this.addr = '';
  }

  nextSeqNo() {
    return ++this.seqNo;
  }

  broadcast(node, msg) {
    this.broadcasts.queueBroadcast(node, msg);
  }

  create() {
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => this.state());
    this.addr = `${this.name}:${this.config.bindPort || this.ephemeralPort()}`;
    this.aliveNode({ node: this.name, addr: this.addr, incarnation: 1 }, true);
    this.rt.log.info('member started', { addr: this.addr, join: this.join });
    this.schedule();
    this.tryJoin(0);
  }

  /**
   * bindPort 0: a fresh port at every start, as a process on an ephemeral port (or a pod
   * rescheduled with a new IP) comes back at a new address; like the OS, never the one
   * its last run held.
   */
  ephemeralPort() {
    const last = Number(this.rt.disk.read('last-port') ?? 0);
    let port = last;
    while (port === last) port = 20000 + Math.floor(this.rt.random() * 40000);
    this.rt.disk.write('last-port', String(port));
    this.rt.disk.sync();
    return port;
  }

  schedule() {
    const every = (ms, fn) => {
      const tick = () => {
        if (this.leaving) return;
        fn();
        this.rt.setTimer(ms, tick);
      };
      this.rt.setTimer(ms, tick);
    };
    every(this.config.probeIntervalMs, () => this.probe());
    every(this.config.gossipIntervalMs, () => this.gossip());
    every(this.config.pushPullIntervalMs, () => {
      const peer = this.kRandomNodes(1, (n) => n.state !== StateAlive)[0];
      if (peer) this.sendPushPull(peer.name, false);
    });
  }

  /** Join: a push/pull with each seed in turn until one answers; retried until one does. */
  tryJoin(i) {
    if (this.joined || this.join.length === 0) return;
    const seed = this.join[i % this.join.length];
    this.sendPushPull(seed, true);
    this.rt.setTimer(this.config.joinRetryMs, () => this.tryJoin(i + 1));
  }

  sendPushPull(to, join) {
    this.rt.send(to, 'pushPull', { join, nodes: this.localState() });
  }

  localState() {
    return this.nodes.map((n) => ({ name: n.name, addr: n.addr, incarnation: n.incarnation, state: n.state }));
  }

  /** Piggybacks queued broadcasts on a compound message to gossipNodes random members. */
  gossip() {
    if (this.broadcasts.numQueued() === 0) return;
    const now = this.rt.now();
    const targets = this.kRandomNodes(this.config.gossipNodes, (n) => {
      if (n.state === StateAlive || n.state === StateSuspect) return false;
      return now - n.stateChange > this.config.gossipToTheDeadMs;
    });
    for (const t of targets) {
      const msgs = this.broadcasts.getBroadcasts(8);
      if (msgs.length === 0) return;
      this.rt.send(t.name, 'compound', { msgs });
    }
  }

  handleStateMessage(msg) {
    switch (msg.type) {
      case 'alive':
        return this.aliveNode(msg);
      case 'suspect':
        return this.suspectNode(msg);
      case 'dead':
        return this.deadNode(msg);
    }
  }

  onMessage({ from, type, body }) {
    if (this.rt.nodes.includes(from)) return this.onPeerMessage(from, type, body ?? {});
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: req.reqId ?? null, ...res });
    switch (type) {
      case 'Status':
        return reply({ ok: true, ...this.status() });
      case 'Leave':
        return this.leave(() => reply({ ok: true }));
      default:
        return reply({ ok: false, error: `unknown request ${type}` });
    }
  }

  onPeerMessage(from, type, body) {
    if (this.leaving) return;
    switch (type) {
      case 'ping':
        // A ping for another name or for an address this process does not hold is not ours.
        if (body.node !== this.name || body.addr !== this.addr) return;
        return this.rt.send(from, 'ack', { seqNo: body.seqNo });
      case 'indirectPing': {
        const seqNo = this.nextSeqNo();
        this.ackHandlers.set(seqNo, () => this.rt.send(from, 'ack', { seqNo: body.seqNo }));
        this.rt.send(body.target, 'ping', { seqNo, node: body.target, addr: body.addr });
        this.rt.setTimer(this.config.probeTimeoutMs * 2, () => this.ackHandlers.delete(seqNo));
        return;
      }
      case 'ack': {
        const h = this.ackHandlers.get(body.seqNo);
        if (h) {
          this.ackHandlers.delete(body.seqNo);
          h();
        }
        return;
      }
      case 'compound':
        for (const m of body.msgs ?? []) this.handleStateMessage(m);
        return;
      case 'pushPull':
        this.rt.send(from, 'pushPullResp', { nodes: this.localState() });
        this.mergeRemoteState(body.nodes ?? []);
        return;
      case 'pushPullResp':
        if (!this.joined) {
          this.joined = true;
          this.rt.log.info('joined cluster', { via: from });
        }
        this.mergeRemoteState(body.nodes ?? []);
        return;
    }
  }

  /** Graceful leave: broadcast our own death (as left), give it time to spread, stop. */
  leave(done) {
    const me = this.nodeMap.get(this.name);
    this.leaving = true;
    this.deadNode({ node: this.name, incarnation: me.incarnation, from: this.name });
    for (let at = 0; at < this.config.leavePropagateMs; at += this.config.gossipIntervalMs) {
      this.rt.setTimer(at, () => this.gossip());
    }
    this.rt.setTimer(this.config.leavePropagateMs, () => {
      this.rt.log.info('left cluster');
      done();
    });
  }

  status() {
    const members = this.nodes
      .map((n) => ({ name: n.name, addr: n.addr, state: n.state, incarnation: n.incarnation }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    return {
      id: this.name,
      addr: this.addr,
      incarnation: this.nodeMap.get(this.name)?.incarnation ?? 0,
      leaving: this.leaving,
      members,
      alive: members.filter((m) => m.state === StateAlive).map((m) => m.name),
    };
  }

  state() {
    return { ...this.status(), joined: this.joined, queuedBroadcasts: this.broadcasts.numQueued() };
  }
}

Object.assign(Memberlist.prototype, stateMethods);
