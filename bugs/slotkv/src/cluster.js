// cluster.js — the cluster bus (cluster.c): PING/PONG with gossip, failure
// detection (PFAIL, then FAIL once a majority of masters agrees), slot
// ownership decided by configEpoch, replica elections with
// FAILOVER_AUTH_REQUEST / FAILOVER_AUTH_ACK, manual failover (MFSTART), and
// CLUSTER FORGET with the nodes blacklist. The node's view is saved to
// nodes.conf (and synced) whenever it changes.

import { SLOTS } from './db.js';

/** How long a forgotten node is kept out of the node table (Redis's CLUSTER_BLACKLIST_TTL, 60 s, scaled like the node timeout). */
const BLACKLIST_TTL_MS = 6000;

export class Cluster {
  /** @param {DDBench.NodeRuntime} rt @param {import('./replication.js').Replication} repl @param {{pauseClients(until: number): void, unpauseClients(): void}} server */
  constructor(rt, repl, server) {
    this.rt = rt;
    this.repl = repl;
    this.server = server;
    this.nodeTimeout = Number(rt.config.nodeTimeoutMs ?? 1500);
    this.validityFactor = Number(rt.config.replicaValidityFactor ?? 10);
    this.mfTimeout = Number(rt.config.mfTimeoutMs ?? 1500);
    this.myself = rt.id;
    /** @type {Map<string, any>} */
    this.nodes = new Map();
    /** @type {(string | null)[]} owner of each slot */
    this.slots = new Array(SLOTS).fill(null);
    this.currentEpoch = 0;
    this.lastVoteEpoch = 0;
    /** @type {Map<string, number>} forgotten node → when gossip may add it again */
    this.blacklist = new Map();
    this.resetFailoverState();
    this.resetManualFailoverState();
  }

  get me() {
    return this.nodes.get(this.myself);
  }

  isMaster() {
    return this.me.role === 'master';
  }

  // ---- configuration -----------------------------------------------------------

  load() {
    const saved = this.rt.disk.read('nodes.conf');
    const now = this.rt.now();
    if (saved) {
      const conf = JSON.parse(saved);
      this.currentEpoch = conf.currentEpoch;
      this.lastVoteEpoch = conf.lastVoteEpoch;
      this.slots = conf.slots;
      for (const n of conf.nodes) this.nodes.set(n.id, Object.assign(this.blankNode(n.id, now), { role: n.role, masterId: n.masterId, configEpoch: n.configEpoch }));
      this.rt.log.info('loaded nodes.conf', { currentEpoch: this.currentEpoch, role: this.me.role, master: this.me.masterId });
      return;
    }
    for (const id of this.rt.nodes) this.nodes.set(id, this.blankNode(id, now));
    const masters = /** @type {Record<string, [number, number]>} */ (this.rt.config.masters ?? {});
    const replicas = /** @type {Record<string, string>} */ (this.rt.config.replicas ?? {});
    let epoch = 0;
    for (const [id, [from, to]] of Object.entries(masters)) {
      this.nodes.get(id).configEpoch = ++epoch;
      for (let s = from; s <= to; s++) this.slots[s] = id;
    }
    for (const [id, master] of Object.entries(replicas)) Object.assign(this.nodes.get(id), { role: 'replica', masterId: master });
    this.currentEpoch = epoch;
    this.saveConfig();
  }

  blankNode(id, now) {
    return { id, role: 'master', masterId: null, configEpoch: 0, linked: false, pingSent: 0, pongReceived: now, pfail: false, fail: false, failTime: 0, failReports: new Map(), offset: 0, votedTime: 0 };
  }

  saveConfig() {
    const nodes = [...this.nodes.values()].map((n) => ({ id: n.id, role: n.role, masterId: n.masterId, configEpoch: n.configEpoch }));
    this.rt.disk.write('nodes.conf', JSON.stringify({ currentEpoch: this.currentEpoch, lastVoteEpoch: this.lastVoteEpoch, slots: this.slots, nodes }));
    this.rt.disk.sync();
  }

  slotsOf(id) {
    const out = [];
    for (let s = 0; s < SLOTS; s++) if (this.slots[s] === id) out.push(s);
    return out;
  }

  /** Masters that serve at least one slot: the electorate. */
  clusterSize() {
    return new Set(this.slots.filter(Boolean)).size;
  }

  quorum() {
    return Math.floor(this.clusterSize() / 2) + 1;
  }

  // ---- messages ------------------------------------------------------------------

  header(extra = {}) {
    const me = this.me;
    const master = me.role === 'master' ? me : this.nodes.get(me.masterId);
    return {
      currentEpoch: this.currentEpoch,
      configEpoch: master?.configEpoch ?? 0,
      role: me.role,
      masterId: me.masterId,
      slots: me.role === 'master' ? this.slotsOf(this.myself) : [],
      offset: this.repl.offset,
      gossip: [...this.nodes.values()].filter((n) => n.id !== this.myself).map((n) => ({ id: n.id, pfail: n.pfail, fail: n.fail })),
      forgotten: this.forgottenNodes(),
      ...extra,
    };
  }

  sendPing(to) {
    const n = this.nodes.get(to);
    if (n.pingSent === 0) n.pingSent = this.rt.now();
    this.rt.send(to, 'Ping', this.header({ mf: this.mfEnd > 0 && this.mfReplica === to }));
  }

  broadcastPong() {
    for (const id of this.nodes.keys()) if (id !== this.myself) this.rt.send(id, 'Pong', this.header());
  }

  /** clusterProcessPacket */
  process(from, type, h) {
    const sender = this.nodes.get(from);
    if (!sender) {
      // A node this one does not know (forgotten, or reset): answer its PING, believe nothing it says.
      if (type === 'Ping') this.rt.send(from, 'Pong', this.header());
      return;
    }
    const now = this.rt.now();
    if (h.currentEpoch > this.currentEpoch) {
      this.currentEpoch = h.currentEpoch;
      this.saveConfig();
    }
    switch (type) {
      case 'Fail': {
        const n = this.nodes.get(h.id);
        if (n && n.id !== this.myself && !n.fail) {
          n.fail = true;
          n.failTime = now;
          this.rt.log.info('node marked FAIL by another node', { node: n.id, by: from });
        }
        return;
      }
      case 'FailoverAuthRequest':
        return this.sendFailoverAuthIfNeeded(sender, h);
      case 'FailoverAuthAck':
        if (sender.role === 'master' && this.slotsOf(from).length > 0 && h.currentEpoch >= this.authEpoch && !this.authVotes.has(from)) {
          this.authVotes.add(from);
          this.handleReplicaFailover();
        }
        return;
      case 'MfStart':
        if (!this.isMaster() || sender.masterId !== this.myself) return;
        this.resetManualFailover();
        this.mfEnd = now + this.mfTimeout;
        this.mfReplica = from;
        this.server.pauseClients(now + this.mfTimeout * 2);
        this.rt.log.info('manual failover requested by replica', { replica: from, offset: this.repl.offset });
        return;
      case 'Update': {
        const owner = this.nodes.get(h.id);
        if (!owner || h.configEpoch <= owner.configEpoch) return;
        owner.configEpoch = h.configEpoch;
        owner.role = 'master';
        owner.masterId = null;
        this.updateSlotsConfigWith(owner, h.configEpoch, h.slots);
        return;
      }
    }
    if (type !== 'Ping' && type !== 'Pong') return;
    if (type === 'Ping') this.rt.send(from, 'Pong', this.header());
    sender.linked = true;
    sender.pongReceived = now;
    sender.pingSent = 0;
    if (sender.pfail) {
      sender.pfail = false;
      this.rt.log.info('node is reachable again', { node: from });
    }
    if (sender.fail && (h.role === 'replica' || this.slotsOf(from).length === 0 || now - sender.failTime > this.nodeTimeout * 2)) {
      sender.fail = false;
      this.rt.log.info('clear FAIL state', { node: from });
    }
    sender.offset = h.offset;
    if (h.role !== 'replica' || h.masterId !== this.myself) this.repl.replicas.delete(from);
    if (h.role === 'replica') {
      if (sender.role !== 'replica' || sender.masterId !== h.masterId) {
        sender.role = 'replica';
        sender.masterId = h.masterId;
        this.saveConfig();
      }
    } else if (sender.role !== 'master') {
      sender.role = 'master';
      sender.masterId = null;
      this.saveConfig();
    }
    for (const f of h.forgotten) this.forgetGossiped(f.id, f.ttlMs);
    for (const g of h.gossip) {
      if (g.id === this.myself) continue;
      const n = this.nodes.get(g.id);
      if (!n) {
        this.startHandshake(g.id);
        continue;
      }
      if (h.role === 'master' && this.slotsOf(from).length > 0 && (g.pfail || g.fail)) n.failReports.set(from, now);
      else n.failReports.delete(from);
      this.markNodeAsFailingIfNeeded(n);
    }
    if (h.role === 'master') {
      if (h.configEpoch > sender.configEpoch) {
        sender.configEpoch = h.configEpoch;
        this.saveConfig();
      }
      this.updateSlotsConfigWith(sender, h.configEpoch, h.slots);
      for (const s of h.slots) {
        const owner = this.slots[s] && this.nodes.get(this.slots[s]);
        if (owner && owner.id !== from && owner.configEpoch > h.configEpoch) {
          this.rt.send(from, 'Update', { currentEpoch: this.currentEpoch, id: owner.id, configEpoch: owner.configEpoch, slots: this.slotsOf(owner.id) });
          break;
        }
      }
    }
    if (type === 'Ping' && h.mf && this.me.masterId === from && this.mfEnd > 0 && this.mfMasterOffset === -1) {
      this.mfMasterOffset = h.offset;
      this.rt.log.info('received replication offset for paused master manual failover', { offset: h.offset });
    }
  }

  /** clusterUpdateSlotsConfigWith: claims backed by a greater configEpoch win. */
  updateSlotsConfigWith(sender, senderConfigEpoch, claimed) {
    const curMaster = this.isMaster() ? this.myself : this.me.masterId;
    let newMaster = null;
    let changed = false;
    for (const s of claimed) {
      const owner = this.slots[s];
      if (owner === sender.id) continue;
      if (owner === null || this.nodes.get(owner).configEpoch < senderConfigEpoch) {
        if (owner === curMaster) newMaster = sender;
        this.slots[s] = sender.id;
        changed = true;
      }
    }
    if (!changed) return;
    this.rt.log.info('slots reassigned', { to: sender.id, configEpoch: senderConfigEpoch, slots: this.slotsOf(sender.id) });
    if (newMaster && this.slotsOf(curMaster).length === 0) this.setMaster(newMaster.id);
    this.saveConfig();
  }

  /** clusterSetMaster: become (or stay) a replica of `id`. */
  setMaster(id) {
    const me = this.me;
    const wasMaster = me.role === 'master';
    me.role = 'replica';
    me.masterId = id;
    this.rt.log.info(wasMaster ? 'lost my slots, becoming a replica' : 'following the new master', { master: id });
    this.resetManualFailover();
    this.resetFailoverState();
    this.repl.replicationSetMaster(id);
    this.saveConfig();
  }

  // ---- node table: handshake, CLUSTER FORGET, CLUSTER RESET ----------------------

  /** clusterBlacklistExists, after clusterBlacklistCleanup. */
  blacklisted(id) {
    const now = this.rt.now();
    for (const [n, until] of this.blacklist) if (until <= now) this.blacklist.delete(n);
    return this.blacklist.has(id);
  }

  /** The blacklist with each entry's remaining time, gossiped in PING and PONG. */
  forgottenNodes() {
    const now = this.rt.now();
    return [...this.blacklist].filter(([, until]) => until > now).map(([id, until]) => ({ id, ttlMs: until - now }));
  }

  /** A node named in a peer's gossip that this node does not know: meet it (clusterStartHandshake). */
  startHandshake(id) {
    if (!this.rt.nodes.includes(id) || this.blacklisted(id)) return;
    this.nodes.set(id, this.blankNode(id, this.rt.now()));
    this.rt.log.info('start handshake with a node learned from gossip', { node: id });
    this.saveConfig();
  }

  /** clusterDelNode: drop the node, its slots, its failure reports and its replication link. */
  delNode(id) {
    for (let s = 0; s < SLOTS; s++) if (this.slots[s] === id) this.slots[s] = null;
    for (const n of this.nodes.values()) {
      n.failReports.delete(id);
      if (n.masterId === id) n.masterId = null;
    }
    this.nodes.delete(id);
    this.repl.replicas.delete(id);
    this.saveConfig();
  }

  /** CLUSTER FORGET */
  forget(id) {
    if (!this.nodes.has(id)) return { ok: false, error: `Unknown node ${id}` };
    if (id === this.myself) return { ok: false, error: "I tried hard but I can't forget myself..." };
    if (!this.isMaster() && this.me.masterId === id) return { ok: false, error: "Can't forget my master!" };
    this.blacklist.set(id, this.rt.now() + BLACKLIST_TTL_MS);
    this.delNode(id);
    this.rt.log.info('forgetting node', { node: id });
    return { ok: true };
  }

  /** A peer forgot a node: forget it too, for the rest of the peer's blacklist time. */
  forgetGossiped(id, ttlMs) {
    if (!this.nodes.has(id) || id === this.myself || (!this.isMaster() && this.me.masterId === id)) return;
    this.blacklist.set(id, this.rt.now() + ttlMs);
    this.delNode(id);
    this.rt.log.info('forgetting node forgotten by a peer', { node: id, ttlMs });
  }

  /** CLUSTER RESET HARD: forget every other node and leave the cluster as an empty master. */
  reset() {
    if (this.isMaster() && this.slotsOf(this.myself).length > 0) return { ok: false, error: "CLUSTER RESET can't be called on a master serving slots" };
    if (!this.isMaster()) this.repl.replicationUnsetMaster();
    this.repl.db.load([]);
    this.resetManualFailover();
    this.resetFailoverState();
    for (const id of [...this.nodes.keys()]) if (id !== this.myself) this.delNode(id);
    this.blacklist.clear();
    Object.assign(this.me, { role: 'master', masterId: null, configEpoch: 0 });
    this.currentEpoch = 0;
    this.lastVoteEpoch = 0;
    this.saveConfig();
    this.rt.log.info('cluster reset: forgot every other node');
    return { ok: true };
  }

  // ---- failure detection --------------------------------------------------------

  markNodeAsFailingIfNeeded(n) {
    if (!n.pfail || n.fail) return;
    const now = this.rt.now();
    for (const [reporter, at] of n.failReports) if (now - at > this.nodeTimeout * 2) n.failReports.delete(reporter);
    const failures = n.failReports.size + (this.isMaster() && this.slotsOf(this.myself).length > 0 ? 1 : 0);
    if (failures < this.quorum()) return;
    n.fail = true;
    n.failTime = now;
    this.rt.log.info('marking node as FAIL', { node: n.id, reports: failures, quorum: this.quorum() });
    for (const id of this.nodes.keys()) if (id !== this.myself) this.rt.send(id, 'Fail', { currentEpoch: this.currentEpoch, id: n.id });
  }

  // ---- failover -----------------------------------------------------------------

  resetFailoverState() {
    this.authTime = 0;
    this.authSent = false;
    this.authEpoch = 0;
    this.authVotes = new Set();
    this.cantFailoverLoggedAt = 0;
  }

  resetManualFailoverState() {
    this.mfEnd = 0;
    this.mfReplica = null;
    this.mfMasterOffset = -1;
    this.mfCanStart = false;
  }

  resetManualFailover() {
    if (this.mfEnd > 0 && this.mfReplica !== null) this.server.unpauseClients();
    this.resetManualFailoverState();
  }

  /** CLUSTER FAILOVER, on a replica. */
  manualFailover() {
    if (this.isMaster()) return { ok: false, error: 'You should send CLUSTER FAILOVER to a replica' };
    this.resetManualFailover();
    this.mfEnd = this.rt.now() + this.mfTimeout;
    this.rt.send(this.me.masterId, 'MfStart', { currentEpoch: this.currentEpoch });
    this.rt.log.info('manual failover user request accepted', { master: this.me.masterId });
    return { ok: true };
  }

  handleManualFailover() {
    if (this.mfEnd === 0 || this.mfCanStart || this.mfMasterOffset === -1) return;
    if (this.mfMasterOffset === this.repl.offset) {
      this.mfCanStart = true;
      this.rt.log.info('all master replication stream processed, manual failover can start', { offset: this.repl.offset });
    }
  }

  replicaRank() {
    const mine = this.repl.offset;
    return [...this.nodes.values()].filter((n) => n.id !== this.myself && n.role === 'replica' && n.masterId === this.me.masterId && n.offset > mine).length;
  }

  logCantFailover(reason, fields) {
    const now = this.rt.now();
    if (now - this.cantFailoverLoggedAt < 1000) return;
    this.cantFailoverLoggedAt = now;
    this.rt.log.warn(`currently unable to failover: ${reason}`, fields);
  }

  /** clusterHandleSlaveFailover */
  handleReplicaFailover() {
    const me = this.me;
    if (me.role !== 'replica') return;
    const master = this.nodes.get(me.masterId);
    const manual = this.mfEnd > 0 && this.mfCanStart;
    if (!master || (!master.fail && !manual) || this.slotsOf(master.id).length === 0) return;
    const now = this.rt.now();
    let dataAge = this.repl.replState === 'CONNECTED' ? now - this.repl.lastInteraction : now - this.repl.replDownSince;
    if (dataAge > this.nodeTimeout) dataAge -= this.nodeTimeout;
    if (this.validityFactor > 0 && dataAge > this.repl.replPingPeriodMs + this.nodeTimeout * this.validityFactor && !manual) {
      this.logCantFailover('data age of this replica is too old', { dataAgeMs: dataAge });
      return;
    }
    const authTimeout = this.nodeTimeout * 2;
    if (now - this.authTime > authTimeout * 2) {
      const rank = manual ? 0 : this.replicaRank();
      this.authTime = manual ? now : now + 500 + Math.floor(this.rt.random() * 500) + rank * 1000;
      this.authSent = false;
      this.authVotes = new Set();
      this.rt.log.info('start of election delayed', { delayMs: this.authTime - now, rank, offset: this.repl.offset, manual });
      if (!manual) return;
    }
    if (now < this.authTime || now - this.authTime > authTimeout) return;
    if (!this.authSent) {
      this.currentEpoch += 1;
      this.authEpoch = this.currentEpoch;
      this.authSent = true;
      this.saveConfig();
      this.rt.log.info('starting a failover election', { epoch: this.currentEpoch, master: master.id, manual });
      const req = this.header({ masterId: master.id, masterConfigEpoch: master.configEpoch, claimed: this.slotsOf(master.id), mf: manual });
      for (const id of this.nodes.keys()) if (id !== this.myself) this.rt.send(id, 'FailoverAuthRequest', req);
      return;
    }
    if (this.authVotes.size < this.quorum()) return;
    this.rt.log.info('failover election won', { epoch: this.authEpoch, votes: this.authVotes.size, previousMaster: master.id });
    const previous = master.id;
    me.role = 'master';
    me.masterId = null;
    if (me.configEpoch < this.authEpoch) me.configEpoch = this.authEpoch;
    for (let s = 0; s < SLOTS; s++) if (this.slots[s] === previous) this.slots[s] = this.myself;
    this.repl.replicationUnsetMaster();
    this.resetManualFailover();
    this.resetFailoverState();
    this.saveConfig();
    this.broadcastPong();
  }

  /** clusterSendFailoverAuthIfNeeded: a master's vote. */
  sendFailoverAuthIfNeeded(requester, req) {
    if (!this.isMaster() || this.slotsOf(this.myself).length === 0) return;
    if (req.currentEpoch < this.currentEpoch || this.lastVoteEpoch === this.currentEpoch) return;
    const master = this.nodes.get(req.masterId);
    const now = this.rt.now();
    if (!master || requester.id === this.myself) return;
    if (!master.fail && !req.mf) return;
    if (now - master.votedTime < this.nodeTimeout * 2) return;
    for (const s of req.claimed) {
      const owner = this.slots[s] && this.nodes.get(this.slots[s]);
      if (owner && owner.configEpoch > req.masterConfigEpoch) return;
    }
    this.lastVoteEpoch = this.currentEpoch;
    master.votedTime = now;
    this.saveConfig();
    this.rt.log.info('failover auth granted', { to: requester.id, epoch: this.currentEpoch });
    this.rt.send(requester.id, 'FailoverAuthAck', { currentEpoch: this.currentEpoch });
  }

  // ---- cron -----------------------------------------------------------------------

  /** clusterCron, every 100 ms. */
  cron() {
    const now = this.rt.now();
    const others = [...this.nodes.values()].filter((n) => n.id !== this.myself);
    const random = others[Math.floor(this.rt.random() * others.length)];
    for (const n of others) {
      if (n.pingSent === 0 && (n === random || now - n.pongReceived > this.nodeTimeout / 2)) this.sendPing(n.id);
      else if (n.pingSent !== 0 && now - n.pingSent > this.nodeTimeout / 2) this.sendPing(n.id);
      else if (this.mfEnd > 0 && this.mfReplica === n.id) this.sendPing(n.id);
      if (n.linked && n.pingSent !== 0 && now - n.pingSent > this.nodeTimeout && !n.pfail) {
        n.pfail = true;
        this.rt.log.info('marking node as PFAIL', { node: n.id });
      }
      this.markNodeAsFailingIfNeeded(n);
    }
    if (this.mfEnd > 0 && now > this.mfEnd) {
      this.rt.log.warn('manual failover timed out', { masterOffset: this.mfMasterOffset, offset: this.repl.offset });
      this.resetManualFailover();
    }
    if (!this.isMaster()) {
      this.handleManualFailover();
      this.handleReplicaFailover();
    }
  }
}
