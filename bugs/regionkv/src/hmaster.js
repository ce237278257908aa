// hmaster.js — the master, after HBase's HMaster. Masters race for the
// ephemeral /hbase/master znode; the winner is active, the others wait as
// backups. The active master tracks region servers through their ephemeral
// znodes under /hbase/rs (ServerManager), keeps the state of every region in
// memory (AssignmentManager / RegionStates), assigns regions with OpenRegion,
// and runs a ServerCrashProcedure when a server's znode goes away: have a live
// region server split the dead server's WAL into recovered edits per region
// (SplitWALManager), then reassign its regions (and settle the splits it had begun).
// A master that becomes active after a failover rebuilds the region states from
// hbase:meta (joinCluster).

import { RpcClient, replier, hostOf } from './rpc.js';
import { ZKWatcher } from './zkwatcher.js';

export class HMaster {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.rpc = new RpcClient(rt);
    this.pollMs = Number(rt.config.masterPollMs ?? 150);
    this.splits = /** @type {string[]} */ (rt.config.tableSplits ?? ['g', 'p']);
    this.minServers = Number(rt.config.minServersToStart ?? 1);
    this.waitOnServersMs = Number(rt.config.waitOnServersMs ?? 3000);
    this.splitTimeoutMs = Number(rt.config.splitTimeoutMs ?? 6000);
    this.incarnation = 0;
    this.reset();
  }

  /** Fresh master state and a new ZooKeeper session (at start, and after the old session expired). */
  reset() {
    const inc = ++this.incarnation;
    this.zk = new ZKWatcher(this.rt, this.rpc, () => this.abort('zookeeper session expired', inc));
    this.active = false;
    this.initialized = false;
    this.aborted = false;
    this.waiting = false;
    /** @type {Set<string>} server names with a live znode */
    this.onlineServers = new Set();
    /** @type {Map<string, { info: any, state: string, server: string | null }>} */
    this.regionStates = new Map();
    this.rr = 0;
  }

  start() {
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => this.status());
    this.zk.connect(() => this.blockUntilBecomingActiveMaster());
  }

  /** Gives up mastership; the process comes back as a backup master with a new session. */
  abort(why, inc) {
    if (this.aborted || inc !== this.incarnation) return;
    this.aborted = true;
    this.active = false;
    this.rt.log.error('master aborting', { why });
    this.rt.setTimer(200, () => {
      this.reset();
      this.rt.log.info('master restarting');
      this.zk.connect(() => this.blockUntilBecomingActiveMaster());
    });
  }

  onMessage(msg) {
    if (this.rpc.onReply(msg) || this.aborted) return;
    const reply = replier(this.rt, msg);
    const b = msg.body ?? {};
    switch (msg.type) {
      case 'Status':
        return reply({ ok: true, ...this.brief() });
      case 'ReportRegionStateTransition':
        if (!this.active) return reply({ ok: false, error: 'not active master' });
        return reply(this.reportTransition(b));
      default:
        return reply({ ok: false, error: `unknown request ${msg.type}` });
    }
  }

  // ---- active master election ----------------------------------------------

  blockUntilBecomingActiveMaster() {
    if (this.aborted) return;
    const zk = this.zk;
    zk.op('ZkCreate', { path: '/hbase/master', data: this.rt.id, ephemeral: true }, (res) => {
      if (zk !== this.zk) return;
      if (res.ok) return this.becomeActive();
      // A create whose reply was lost may have succeeded: the znode is ours if our session owns it.
      zk.op('ZkGet', { path: '/hbase/master' }, (cur) => {
        if (zk !== this.zk) return;
        if (cur.ok && cur.exists && cur.ephemeralOwner === zk.sid) return this.becomeActive();
        if (!this.waiting) {
          this.waiting = true;
          this.rt.log.info('waiting to become the active master');
        }
        this.rt.setTimer(this.pollMs, () => this.blockUntilBecomingActiveMaster());
      });
    });
  }

  becomeActive() {
    const inc = this.incarnation;
    this.active = true;
    this.rt.log.info('became active master');
    this.refreshServers(() => inc === this.incarnation && this.joinCluster());
  }

  // ---- ServerManager -------------------------------------------------------

  /** Reads /hbase/rs: new znodes are servers coming online, missing ones are dead. */
  refreshServers(cb) {
    const inc = this.incarnation;
    this.zk.op('ZkChildren', { path: '/hbase/rs' }, (res) => {
      if (inc !== this.incarnation || this.aborted) return;
      if (!res.ok) return this.rt.setTimer(this.pollMs, () => this.refreshServers(cb));
      const live = new Set(res.children.map((c) => c.name));
      for (const s of live) {
        if (!this.onlineServers.has(s)) {
          this.onlineServers.add(s);
          this.rt.log.info('region server online', { server: s });
        }
      }
      const dead = [...this.onlineServers].filter((s) => !live.has(s));
      for (const s of dead) this.expireServer(s);
      cb();
    });
  }

  serverTracker() {
    const inc = this.incarnation;
    this.refreshServers(() => {
      this.assignPending();
      this.rt.setTimer(this.pollMs, () => inc === this.incarnation && this.serverTracker());
    });
  }

  expireServer(server) {
    this.onlineServers.delete(server);
    this.rt.log.info('region server expired', { server });
    const regions = [...this.regionStates.values()].filter((r) => r.server === server && r.state !== 'SPLIT').map((r) => r.info.name);
    this.serverCrashProcedure(server, regions);
  }

  // ---- startup / failover --------------------------------------------------

  joinCluster(waitedMs = 0) {
    const inc = this.incarnation;
    this.zk.opRetry('ZkChildren', { path: '/hbase/meta' }, (res) => {
      if (inc !== this.incarnation) return;
      if (res.children.length === 0 && this.onlineServers.size < this.minServers && waitedMs < this.waitOnServersMs) {
        // A fresh cluster: wait for region servers to check in before the first assignment.
        return this.rt.setTimer(this.pollMs, () => this.refreshServers(() => this.joinCluster(waitedMs + this.pollMs)));
      }
      if (res.children.length === 0) {
        this.createTable();
      } else {
        const deadServers = this.rebuildUserRegions(res.children.map((c) => c.data));
        for (const [server, regions] of deadServers) this.serverCrashProcedure(server, regions);
      }
      this.initialized = true;
      this.rt.log.info('master initialized', { regions: this.regionStates.size, servers: [...this.onlineServers] });
      this.serverTracker();
    });
  }

  /** Region states from hbase:meta; returns the regions of servers that are gone, by server. */
  rebuildUserRegions(rows) {
    /** @type {Map<string, string[]>} */
    const deadServers = new Map();
    for (const info of rows) {
      if (info.offline && info.split) {
        this.regionStates.set(info.name, { info, state: 'SPLIT', server: null });
        continue;
      }
      if (info.server && this.onlineServers.has(info.server)) {
        this.regionStates.set(info.name, { info, state: 'OPEN', server: info.server });
      } else if (info.server) {
        this.regionStates.set(info.name, { info, state: 'OPEN', server: info.server });
        deadServers.set(info.server, [...(deadServers.get(info.server) ?? []), info.name]);
      } else {
        this.regionStates.set(info.name, { info, state: 'OFFLINE', server: null });
      }
    }
    return deadServers;
  }

  createTable() {
    const bounds = ['', ...this.splits, ''];
    for (let i = 0; i + 1 < bounds.length; i++) {
      const info = { name: `t,${bounds[i]},1`, table: 't', start: bounds[i], end: bounds[i + 1], offline: false, split: false, server: null };
      this.regionStates.set(info.name, { info, state: 'OFFLINE', server: null });
      this.zk.opRetry('ZkSet', { path: `/hbase/meta/${info.name}`, data: info }, () => {});
    }
    this.rt.log.info('table created', { regions: [...this.regionStates.keys()] });
  }

  // ---- ServerCrashProcedure ------------------------------------------------

  serverCrashProcedure(server, regions) {
    this.recoverSplits(server, regions, (toRecover) => this.recoverRegions(server, toRecover));
  }

  /**
   * Finishes or undoes the splits a dead server had begun (its region-in-transition
   * znodes). Meta recording the parent as split is the split's point of no return:
   * past it the daughters hold the rows, so they are recovered instead of the parent.
   */
  recoverSplits(server, regions, cb) {
    this.zk.opRetry('ZkChildren', { path: '/hbase/region-in-transition' }, (res) => {
      const splits = res.children.map((c) => c.data).filter((d) => d.server === server);
      let toRecover = regions;
      let left = splits.length;
      if (left === 0) return cb(toRecover);
      for (const s of splits) {
        this.zk.opRetry('ZkGet', { path: `/hbase/meta/${s.parent.name}` }, (row) => {
          const parent = this.regionStates.get(s.parent.name);
          if (parent && row.exists && row.data.offline && row.data.split) {
            parent.info = row.data;
            parent.state = 'SPLIT';
            parent.server = null;
            for (const d of s.daughters) this.regionStates.set(d.name, { info: d, state: 'OPEN', server });
            toRecover = [...toRecover.filter((n) => n !== s.parent.name), ...s.daughters.map((d) => d.name)];
            this.rt.log.info('rolling split forward', { parent: s.parent.name, daughters: s.daughters.map((d) => d.name) });
          } else {
            this.rt.log.info('rolling split back', { parent: s.parent.name });
          }
          this.zk.opRetry('ZkDelete', { path: `/hbase/region-in-transition/${s.parent.name}` }, () => {
            if (--left === 0) cb(toRecover);
          });
        });
      }
    });
  }

  recoverRegions(server, regions) {
    this.rt.log.info('processing dead server', { server, regions });
    for (const name of regions) {
      const rs = this.regionStates.get(name);
      if (rs) {
        rs.state = 'OFFLINE';
        rs.server = null;
        rs.splitting = true;
      }
    }
    this.splitLog(server, () => {
      for (const name of regions) {
        const rs = this.regionStates.get(name);
        if (rs) rs.splitting = false;
      }
      this.rt.log.info('dead server processed', { server });
      this.assignPending();
    });
  }

  /**
   * Has a live region server split a dead server's WAL into recovered edits
   * (SplitWALManager). A worker that fails, or has not answered within
   * splitTimeoutMs, is passed over and the WAL goes to another.
   */
  splitLog(server, cb, passedOver = []) {
    const inc = this.incarnation;
    const wal = `/hbase/WALs/${server}`;
    const workers = [...this.onlineServers].filter((s) => s !== server && !passedOver.includes(s)).sort();
    if (workers.length === 0) {
      // No worker left to try: start over with whoever is online by then.
      return this.rt.setTimer(this.pollMs, () => inc === this.incarnation && this.splitLog(server, cb));
    }
    const worker = workers[0];
    this.rt.log.info('splitting log', { server, worker });
    this.rpc.call(hostOf(worker), 'SplitWAL', { wal }, this.splitTimeoutMs, (res) => {
      if (inc !== this.incarnation) return;
      if (res.ok) return cb();
      this.rt.log.warn('log split failed', { server, worker, error: res.error ?? null });
      this.splitLog(server, cb, [...passedOver, worker]);
    });
  }

  // ---- AssignmentManager ---------------------------------------------------

  assignPending() {
    if (!this.active) return;
    for (const rs of this.regionStates.values()) {
      if (rs.state === 'OFFLINE' && !rs.splitting) this.assign(rs);
    }
  }

  assign(rs, retryOn = null) {
    const servers = [...this.onlineServers].sort();
    if (servers.length === 0) return;
    const server = retryOn && this.onlineServers.has(retryOn) ? retryOn : servers[this.rr++ % servers.length];
    rs.state = 'OPENING';
    rs.server = server;
    this.rt.log.info('assigning region', { region: rs.info.name, server });
    this.rpc.call(hostOf(server), 'OpenRegion', { region: rs.info, server }, 2000, (res) => {
      if (rs.state !== 'OPENING' || rs.server !== server) return;
      if (res.ok) {
        rs.state = 'OPEN';
        this.rt.log.info('region opened', { region: rs.info.name, server });
      } else if (res.error === 'timeout' && this.onlineServers.has(server)) {
        // The server may still be opening it: ask the same server again rather than open it twice.
        this.rt.log.warn('open timed out, retrying', { region: rs.info.name, server });
        this.assign(rs, server);
      } else {
        this.rt.log.warn('open failed', { region: rs.info.name, server, error: res.error ?? null });
        rs.state = 'OFFLINE';
        rs.server = null;
      }
    });
  }

  reportTransition(b) {
    if (b.code !== 'SPLIT') return { ok: false, error: `unknown transition ${b.code}` };
    const parent = this.regionStates.get(b.parent.name);
    if (parent) {
      parent.info = b.parent;
      parent.state = 'SPLIT';
      parent.server = null;
    }
    for (const d of b.daughters) this.regionStates.set(d.name, { info: d, state: 'OPEN', server: b.server });
    this.zk.opRetry('ZkDelete', { path: `/hbase/region-in-transition/${b.parent.name}` }, () => {});
    this.rt.log.info('region split', { parent: b.parent.name, daughters: b.daughters.map((d) => d.name), server: b.server });
    return { ok: true };
  }

  // ---- state ---------------------------------------------------------------

  brief() {
    const rit = [...this.regionStates.values()].filter((r) => r.state === 'OFFLINE' || r.state === 'OPENING').length;
    return { id: this.rt.id, active: this.active, initialized: this.initialized, regionsInTransition: rit, onlineServers: [...this.onlineServers].sort() };
  }

  status() {
    return {
      ...this.brief(),
      regions: Object.fromEntries([...this.regionStates].map(([n, r]) => [n, { state: r.state, server: r.server }])),
    };
  }
}
