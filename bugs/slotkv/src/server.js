// server.js — one node (server.c, networking.c, expire.c): client commands
// routed by slot (MOVED when another master owns it), client pause during a
// manual failover, and serverCron (cluster cron, replication cron, then the
// active expire cycle) every 100 ms.

import { Cluster } from './cluster.js';
import { Db, keyHashSlot } from './db.js';
import { Replication } from './replication.js';

const CLUSTER_TYPES = new Set(['Ping', 'Pong', 'Fail', 'FailoverAuthRequest', 'FailoverAuthAck', 'MfStart', 'Update']);
const EXPIRE_KEYS_PER_CYCLE = 20;

export class Server {
  /** @param {DDBench.NodeRuntime} rt */
  constructor(rt) {
    this.rt = rt;
    this.db = new Db();
    this.repl = new Replication(rt, this.db);
    this.cluster = new Cluster(rt, this.repl, this);
    this.pausedUntil = 0;
    /** @type {Array<() => void>} commands held back while clients are paused */
    this.paused = [];
  }

  start() {
    this.cluster.load();
    this.rt.onMessage((m) => this.onMessage(m));
    this.rt.exposeState(() => this.status());
    this.rt.log.info('server started', { role: this.cluster.me.role, master: this.cluster.me.masterId, currentEpoch: this.cluster.currentEpoch });
    if (!this.cluster.isMaster()) this.repl.replicationSetMaster(this.cluster.me.masterId);
    const cron = () => {
      this.serverCron();
      this.rt.setTimer(100, cron);
    };
    this.rt.setTimer(100, cron);
  }

  serverCron() {
    this.cluster.cron();
    this.repl.cron();
    if (this.pausedUntil > 0 && this.rt.now() >= this.pausedUntil) this.unpauseClients();
    this.activeExpireCycle();
  }

  // ---- client pause ------------------------------------------------------------

  clientsArePaused() {
    return this.pausedUntil > 0;
  }

  pauseClients(until) {
    this.pausedUntil = until;
    this.rt.log.info('clients paused', { untilMs: until - this.rt.now() });
  }

  unpauseClients() {
    if (this.pausedUntil === 0) return;
    this.pausedUntil = 0;
    this.rt.log.info('clients unpaused', { held: this.paused.length });
    const held = this.paused;
    this.paused = [];
    for (const run of held) run();
  }

  // ---- expiry ---------------------------------------------------------------------

  activeExpireCycle() {
    if (!this.cluster.isMaster()) return;
    if (this.clientsArePaused()) return;
    const keys = this.db.expiredKeys(this.rt.now(), EXPIRE_KEYS_PER_CYCLE);
    for (const k of keys) this.db.delete(k);
    this.repl.propagate(keys.map((key) => ({ op: 'del', key })));
  }

  /** expireIfNeeded: a master deletes an expired key when it is looked up. */
  lookupKey(key) {
    const e = this.db.lookup(key);
    if (!e || !this.db.isExpired(e, this.rt.now())) return e;
    this.db.delete(key);
    this.repl.propagate([{ op: 'del', key }]);
    return undefined;
  }

  // ---- commands ---------------------------------------------------------------------

  onMessage({ from, type, body }) {
    if (this.rt.nodes.includes(from)) {
      if (CLUSTER_TYPES.has(type)) return this.cluster.process(from, type, body ?? {});
      switch (type) {
        case 'Psync':
          return this.repl.onPsync(from);
        case 'FullResync':
          return this.repl.onFullResync(from, body);
        case 'ReplStream':
          return this.repl.onReplStream(from, body);
        case 'ReplPing':
          return this.repl.onReplPing(from);
      }
      return;
    }
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: req.reqId ?? null, ...res });
    const run = () => reply(this.command(type, req));
    if (this.clientsArePaused() && type !== 'Info' && type !== 'ClusterSlots') return void this.paused.push(run);
    run();
  }

  /** MOVED unless this node is the master that serves the key's slot. */
  route(key) {
    const slot = keyHashSlot(key);
    const owner = this.cluster.slots[slot];
    if (owner === this.rt.id && this.cluster.isMaster()) return null;
    return { ok: false, error: 'MOVED', slot, owner };
  }

  command(type, req) {
    const now = this.rt.now();
    switch (type) {
      case 'Set':
      case 'Get':
      case 'Del': {
        const key = String(req.key);
        const moved = this.route(key);
        if (moved) return moved;
        if (type === 'Get') {
          const e = this.lookupKey(key);
          return { ok: true, found: !!e, value: e?.value ?? null };
        }
        if (type === 'Del') {
          const existed = !!this.lookupKey(key);
          if (existed) {
            this.db.delete(key);
            this.repl.propagate([{ op: 'del', key }]);
          }
          return { ok: true, deleted: existed ? 1 : 0 };
        }
        const expireAt = req.px ? now + Number(req.px) : 0;
        this.db.set(key, String(req.value), expireAt);
        this.repl.propagate([{ op: 'set', key, value: String(req.value), expireAt }]);
        return { ok: true };
      }
      case 'Pipeline': {
        const results = [];
        const cmds = [];
        for (const c of req.cmds ?? []) {
          const moved = this.route(String(c.key));
          if (moved) {
            results.push(moved);
            continue;
          }
          const expireAt = c.px ? now + Number(c.px) : 0;
          this.db.set(String(c.key), String(c.value), expireAt);
          cmds.push({ op: 'set', key: String(c.key), value: String(c.value), expireAt });
          results.push({ ok: true });
        }
        this.repl.propagate(cmds);
        return { ok: true, results };
      }
      case 'DbSize':
        return { ok: true, size: this.db.size, role: this.cluster.me.role };
      case 'ClusterFailover':
        return this.cluster.manualFailover();
      case 'ClusterForget':
        return this.cluster.forget(String(req.id));
      case 'ClusterReset':
        return this.cluster.reset();
      case 'ClusterNodes':
        return { ok: true, nodes: [...this.cluster.nodes.values()].map((n) => ({ id: n.id, role: n.role, master: n.masterId, configEpoch: n.configEpoch, fail: n.fail })) };
      case 'ClusterSlots':
        return { ok: true, slots: this.cluster.slots, epochs: Object.fromEntries([...this.cluster.nodes.values()].map((n) => [n.id, n.configEpoch])) };
      case 'Info':
        return { ok: true, ...this.info() };
      default:
        return { ok: false, error: `unknown command ${type}` };
    }
  }

  info() {
    const c = this.cluster;
    const down = [...c.nodes.values()].filter((n) => n.fail).map((n) => n.id);
    const covered = c.slots.every((o) => o !== null && !c.nodes.get(o).fail);
    return {
      id: this.rt.id,
      role: c.me.role,
      master: c.me.masterId,
      replState: this.repl.replState,
      offset: this.repl.offset,
      currentEpoch: c.currentEpoch,
      configEpoch: c.me.role === 'master' ? c.me.configEpoch : (c.nodes.get(c.me.masterId)?.configEpoch ?? 0),
      clusterState: covered ? 'ok' : 'fail',
      failed: down,
      linked: [...c.nodes.values()].filter((n) => n.id !== this.rt.id && n.linked).map((n) => n.id),
      dbsize: this.db.size,
    };
  }

  status() {
    const c = this.cluster;
    const keys = [...this.db.dict.keys()];
    return {
      ...this.info(),
      lastVoteEpoch: c.lastVoteEpoch,
      replDownSince: this.repl.replDownSince,
      lastInteraction: this.repl.lastInteraction,
      slots: c.slots,
      nodes: [...c.nodes.values()].map((n) => ({ id: n.id, role: n.role, master: n.masterId, configEpoch: n.configEpoch, pfail: n.pfail, fail: n.fail, offset: n.offset })),
      manualFailover: { end: c.mfEnd, replica: c.mfReplica, masterOffset: c.mfMasterOffset, canStart: c.mfCanStart },
      clientsPausedUntil: this.pausedUntil,
      digest: this.db.digest(),
      kv: keys.length <= 1000 ? Object.fromEntries(keys.map((k) => [k, this.db.dict.get(k).value])) : null,
    };
  }
}
