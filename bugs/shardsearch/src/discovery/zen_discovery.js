// zen_discovery.js — master election and fault detection, after Elasticsearch's
// Zen discovery (org.elasticsearch.discovery.zen): a node without a master pings
// every node (zen/ping), picks the master from the answers (ElectMasterService:
// an already active master if one is reported, otherwise, once
// minimum_master_nodes candidates are known, the master-eligible node with the
// newest cluster state, the lowest id breaking ties), and
// either waits for minimum_master_nodes - 1 joins or sends its own join
// (zen/join). The master publishes every new cluster state to all nodes
// (zen/publish), pings them (NodesFaultDetection) and drops those that stop
// answering; the other nodes ping the master (MasterFaultDetection) and start
// a new election when it goes away. A master that sees fewer than
// minimum_master_nodes nodes steps down. A node that stops sends the master a
// leave request (zen/leave) so it is removed without waiting for fault detection.

export class ZenDiscovery {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {{ applyClusterState(state: any): void, reroute(state: any): any }} hooks
   */
  constructor(rt, hooks) {
    this.rt = rt;
    this.hooks = hooks;
    const cfg = rt.config;
    this.minimumMasterNodes = Number(cfg.minimumMasterNodes ?? Math.floor(rt.nodes.length / 2) + 1);
    this.pingTimeoutMs = Number(cfg.pingTimeoutMs ?? 200);
    this.joinTimeoutMs = Number(cfg.joinTimeoutMs ?? 600);
    this.fdIntervalMs = Number(cfg.fdPingIntervalMs ?? 150);
    this.fdRetries = Number(cfg.fdPingRetries ?? 3);
    this.peers = rt.nodes.filter((n) => n !== rt.id);
    /** @type {{ version: number, master: string | null, nodes: string[], routing: any }} */
    this.state = { version: 0, master: null, nodes: [], routing: {} };
    this.joining = false;
    this.round = 0;
    /** nodes that answered our last ping round */
    this.discovered = [];
    /** @type {Map<string, number>} the master's last pong from each node (NodesFaultDetection) */
    this.lastPong = new Map();
    this.lastMasterPong = 0;
    this.pendingPing = null;
    this.pendingJoin = null;
    /** @type {Set<string> | null} joins collected while we wait to become master */
    this.electionJoins = null;
    this.waitingRound = 0;
    this.stopped = false;
  }

  start() {
    const fd = () => {
      if (this.stopped) return;
      this.faultDetection();
      this.rt.setTimer(this.fdIntervalMs, fd);
    };
    this.rt.setTimer(this.fdIntervalMs, fd);
    this.startJoinThread('node started');
  }

  isMaster() {
    return this.state.master === this.rt.id;
  }

  /** The node is closing: no more pings or elections; the master is asked to remove us (MembershipAction's leave request). */
  stop() {
    this.stopped = true;
    this.joining = false;
    this.rt.log.info('stopping discovery', { master: this.state.master });
    if (this.state.master !== null && !this.isMaster()) this.rt.send(this.state.master, 'zen/leave', { node: this.rt.id });
  }

  // ---- pinging and election -----------------------------------------------------------

  startJoinThread(reason) {
    if (this.joining) return;
    this.joining = true;
    this.electionJoins = new Set();
    this.rt.log.info('starting join thread', { reason });
    this.pingRound();
  }

  pingRound() {
    const round = ++this.round;
    this.pendingPing = { round, responses: new Map() };
    for (const p of this.peers) this.rt.send(p, 'zen/ping', { round });
    this.rt.setTimer(this.pingTimeoutMs, () => this.onPingRoundDone(round));
  }

  onPing(from, body) {
    this.rt.send(from, 'zen/pingResp', {
      round: body.round,
      node: this.rt.id,
      master: this.state.master,
      clusterStateVersion: this.state.version,
    });
  }

  onPingResp(from, r) {
    if (this.pendingPing?.round === r.round) this.pendingPing.responses.set(from, r);
  }

  onPingRoundDone(round) {
    if (this.pendingPing?.round !== round) return;
    const responses = [...this.pendingPing.responses.values()];
    this.pendingPing = null;
    this.discovered = responses.map((r) => r.node).sort();
    if (!this.joining) return;
    const master = this.findMaster(responses);
    if (master === this.rt.id) return this.waitForJoins();
    // Joins sent to us while we were pinging are answered once we know we will not be master.
    this.rejectElectionJoins();
    this.electionJoins = new Set();
    if (master === null) return this.retryJoin('no master elected yet');
    this.sendJoin(master);
  }

  findMaster(responses) {
    const activeMasters = [...new Set(responses.map((r) => r.master).filter((m) => m !== null && m !== this.rt.id))].sort();
    this.rt.log.debug('pinging finished', { responses: responses.map((r) => ({ node: r.node, master: r.master, clusterStateVersion: r.clusterStateVersion })) });
    if (activeMasters.length > 0) return activeMasters[0];
    const candidates = [{ node: this.rt.id, version: this.state.version }, ...responses.map((r) => ({ node: r.node, version: r.clusterStateVersion }))];
    if (candidates.length < this.minimumMasterNodes) {
      this.rt.log.info('not enough master nodes discovered during pinging', { candidates: candidates.map((c) => c.node), minimumMasterNodes: this.minimumMasterNodes });
      return null;
    }
    // A node that missed committed cluster states must not win: it would publish its older state.
    candidates.sort((a, b) => b.version - a.version || (a.node < b.node ? -1 : 1));
    const elected = candidates[0].node;
    this.rt.log.info('elected as master candidate', { elected, candidates: candidates.map((c) => `${c.node}@${c.version}`) });
    return elected;
  }

  retryJoin(reason) {
    this.rt.log.debug('retrying join', { reason });
    this.rt.setTimer(Math.floor(this.pingTimeoutMs / 2 + this.rt.random() * 50), () => {
      if (this.joining && !this.stopped) this.pingRound();
    });
  }

  waitForJoins() {
    const round = this.round;
    this.waitingRound = round;
    this.electionJoins ??= new Set();
    this.rt.log.info('waiting for joins to become master', { needed: this.minimumMasterNodes - 1, joins: [...this.electionJoins] });
    if (this.electionJoins.size >= this.minimumMasterNodes - 1) return this.becomeMaster();
    this.rt.setTimer(this.joinTimeoutMs, () => {
      if (this.round !== round || !this.electionJoins) return;
      this.waitingRound = 0;
      this.rt.log.info('failed to elect as master: not enough joins', { joins: [...this.electionJoins], needed: this.minimumMasterNodes - 1 });
      this.rejectElectionJoins();
      this.electionJoins = new Set();
      this.retryJoin('not enough joins');
    });
  }

  waitingForJoins() {
    return this.waitingRound === this.round;
  }

  rejectElectionJoins() {
    for (const n of this.electionJoins ?? []) this.rt.send(n, 'zen/joinResp', { ok: false, reason: 'election failed' });
    this.electionJoins = null;
  }

  sendJoin(master) {
    const round = this.round;
    this.pendingJoin = { round, master };
    this.rt.log.info('joining master', { master });
    this.rt.send(master, 'zen/join', { node: this.rt.id });
    this.rt.setTimer(this.joinTimeoutMs, () => {
      if (this.pendingJoin?.round !== round) return;
      this.pendingJoin = null;
      this.retryJoin(`join to ${master} timed out`);
    });
  }

  onJoin(from) {
    if (this.isMaster()) {
      if (!this.state.nodes.includes(from)) this.updateState(`node-join ${from}`, (s) => ({ ...s, nodes: [...s.nodes, from].sort() }));
      this.lastPong.set(from, this.rt.now());
      this.rt.send(from, 'zen/joinResp', { ok: true });
      this.publish();
      return;
    }
    if (this.joining && this.electionJoins && !this.pendingJoin) {
      this.electionJoins.add(from);
      if (this.waitingForJoins() && this.electionJoins.size >= this.minimumMasterNodes - 1) this.becomeMaster();
      return;
    }
    this.rt.send(from, 'zen/joinResp', { ok: false, reason: 'not master' });
  }

  onLeave(from) {
    if (!this.isMaster() || !this.state.nodes.includes(from)) return;
    this.rt.log.info('node left the cluster', { node: from });
    this.lastPong.delete(from);
    if (this.state.nodes.length - 1 < this.minimumMasterNodes) return this.stepDown(`not enough master nodes after ${from} left`);
    this.updateState(`zen-disco-node-left ${from}`, (s) => ({ ...s, nodes: s.nodes.filter((n) => n !== from) }));
    this.publish();
  }

  onJoinResp(from, r) {
    if (this.pendingJoin?.master !== from) return;
    if (r.ok) {
      this.pendingJoin = null;
      this.joining = false;
      this.lastMasterPong = this.rt.now();
      this.rt.log.info('joined master', { master: from });
      return;
    }
    this.pendingJoin = null;
    this.retryJoin(`join rejected by ${from}: ${r.reason}`);
  }

  becomeMaster() {
    const joined = [...this.electionJoins];
    this.electionJoins = null;
    this.waitingRound = 0;
    this.joining = false;
    const now = this.rt.now();
    for (const n of joined) this.lastPong.set(n, now);
    this.state = { ...this.state, master: this.rt.id };
    this.rt.log.info('elected as master', { nodes: [this.rt.id, ...joined] });
    this.updateState('zen-disco-elected-as-master', (s) => ({ ...s, master: this.rt.id, nodes: [this.rt.id, ...joined].sort() }));
    for (const n of joined) this.rt.send(n, 'zen/joinResp', { ok: true });
    this.publish();
  }

  // ---- cluster state ------------------------------------------------------------------

  /** Master: computes a new cluster state (with a reroute) and applies it locally. */
  updateState(source, fn) {
    const next = this.hooks.reroute(fn(this.state));
    next.version = this.state.version + 1;
    this.rt.log.info('cluster state updated', { source, version: next.version, nodes: next.nodes });
    this.state = next;
    this.hooks.applyClusterState(next);
  }

  publish() {
    for (const n of this.state.nodes) if (n !== this.rt.id) this.rt.send(n, 'zen/publish', { state: this.state });
  }

  onPublish(from, { state }) {
    if (state.master !== from) return;
    if (this.state.master !== null && this.state.master !== from) {
      this.rt.log.info('rejecting cluster state from another master', { from, current: this.state.master });
      return;
    }
    if (this.state.master === from && state.version <= this.state.version) return;
    if (!state.nodes.includes(this.rt.id)) return;
    if (this.state.master !== from) {
      this.joining = false;
      this.pendingJoin = null;
      this.lastMasterPong = this.rt.now();
      this.rt.log.info('detected master', { master: from, version: state.version });
    }
    this.state = state;
    this.hooks.applyClusterState(state);
  }

  // ---- fault detection ----------------------------------------------------------------

  faultDetection() {
    const now = this.rt.now();
    const deadAfter = this.fdIntervalMs * this.fdRetries;
    if (this.isMaster()) {
      for (const n of this.state.nodes) if (n !== this.rt.id) this.rt.send(n, 'zen/fd/ping', { master: this.rt.id });
      const gone = this.state.nodes.filter((n) => n !== this.rt.id && now - (this.lastPong.get(n) ?? 0) > deadAfter);
      if (gone.length === 0) return;
      this.rt.log.info('node failed, removing it from the cluster', { nodes: gone });
      if (this.state.nodes.length - gone.length < this.minimumMasterNodes) return this.stepDown(`not enough master nodes after ${gone.join(',')} left`);
      this.updateState(`zen-disco-node-failed ${gone.join(',')}`, (s) => ({ ...s, nodes: s.nodes.filter((n) => !gone.includes(n)) }));
      this.publish();
      return;
    }
    if (this.state.master === null || this.joining) return;
    this.rt.send(this.state.master, 'zen/fd/masterPing', {});
    if (now - this.lastMasterPong > deadAfter) this.masterLost(`master ${this.state.master} failed to answer ${this.fdRetries} pings`);
  }

  onNodePing(from) {
    this.rt.send(from, 'zen/fd/pingResp', { ok: this.state.master === from });
  }

  onNodePingResp(from, r) {
    if (this.isMaster() && r.ok) this.lastPong.set(from, this.rt.now());
  }

  onMasterPing(from) {
    this.rt.send(from, 'zen/fd/masterPingResp', { isMaster: this.isMaster(), known: this.state.nodes.includes(from) });
  }

  onMasterPingResp(from, r) {
    if (from !== this.state.master) return;
    if (!r.isMaster) return this.masterLost(`${from} is no longer master`);
    if (!r.known) return this.masterLost(`master ${from} does not know this node`);
    this.lastMasterPong = this.rt.now();
  }

  masterLost(reason) {
    if (this.state.master === null) return;
    this.rt.log.info('master left', { master: this.state.master, reason });
    this.state = { ...this.state, master: null };
    this.hooks.applyClusterState(this.state);
    this.startJoinThread(reason);
  }

  stepDown(reason) {
    this.rt.log.info('stepping down as master', { reason });
    this.state = { ...this.state, master: null };
    this.hooks.applyClusterState(this.state);
    this.startJoinThread(reason);
  }
}
