// curator.js — the RM's ZooKeeper client (ZKCuratorManager) and the
// ActiveStandbyElector that runs on it. One session is shared by the elector
// and the state store, as in the curator-based RM. When the server reports the
// session expired, watchers hear it first; then the client opens a new session,
// and every request that was still waiting for an answer is retried once the
// retry interval has passed (Curator's retry loop sleeps between attempts).

export class ZKCuratorManager {
  /** @param {DDBench.NodeRuntime} rt */
  constructor(rt) {
    this.rt = rt;
    this.zk = String(rt.config.zkServer ?? 'zk');
    this.pingMs = Number(rt.config.zkPingMs ?? 200);
    this.retryIntervalMs = Number(rt.config.zkRetryIntervalMs ?? 1000);
    this.session = null;
    this.connecting = false;
    this.xid = 0;
    /** @type {Map<number, {type: string, body: any, cb: (r: any) => void}>} */
    this.pending = new Map();
    /** @type {Array<() => void>} */
    this.expiryWatchers = [];
  }

  start() {
    this.connect();
    const ping = () => {
      if (this.session !== null) this.request('ZkPing', {}, () => {});
      else if (this.connecting && this.rt.now() - this.connectAt > 500) {
        this.connectAt = this.rt.now();
        this.rt.send(this.zk, 'ZkConnect', { xid: 0 });
      }
      this.rt.setTimer(this.pingMs, ping);
    };
    this.rt.setTimer(this.pingMs, ping);
  }

  onSessionExpired(fn) {
    this.expiryWatchers.push(fn);
  }

  connect() {
    if (this.connecting) return;
    this.connecting = true;
    this.connectAt = this.rt.now();
    this.session = null;
    this.rt.send(this.zk, 'ZkConnect', { xid: 0 });
  }

  request(type, body, cb) {
    const xid = ++this.xid;
    this.pending.set(xid, { type, body, cb });
    if (this.session !== null) this.transmit(xid);
  }

  /** Re-sends the requests that lost their session, if still unanswered and connected. */
  retry(xids) {
    if (this.session === null) return;
    for (const xid of xids) if (this.pending.has(xid)) this.transmit(xid);
  }

  transmit(xid) {
    const p = this.pending.get(xid);
    this.rt.send(this.zk, p.type, { ...p.body, xid, session: this.session });
  }

  /** Returns true if the message was a ZooKeeper reply. */
  handle(type, body) {
    if (type === 'ZkConnectResp') {
      if (!this.connecting) return true;
      this.connecting = false;
      this.session = body.session;
      this.rt.log.info('zk session established', { session: this.session });
      const waiting = [...this.pending.keys()];
      if (waiting.length > 0) this.rt.setTimer(this.retryIntervalMs, () => this.retry(waiting));
      return true;
    }
    if (!type.startsWith('Zk')) return false;
    const p = this.pending.get(body.xid);
    if (!p) return true;
    if (body.error === 'SESSION_EXPIRED') {
      if (body.session === this.session) {
        this.rt.log.warn('zk session expired', { session: this.session });
        this.session = null;
        for (const fn of this.expiryWatchers) fn();
        this.connect();
      } else if (this.session !== null) {
        this.transmit(body.xid);
      }
      return true;
    }
    this.pending.delete(body.xid);
    p.cb(body);
    return true;
  }
}

/** Holds the ephemeral lock while this RM is the elected active one. */
export class ActiveStandbyElector {
  /** @param {DDBench.NodeRuntime} rt @param {ZKCuratorManager} zk @param {{becomeActive(): void, becomeStandby(): void}} app */
  constructor(rt, zk, app) {
    this.rt = rt;
    this.zk = zk;
    this.app = app;
    this.retryMs = Number(rt.config.electorRetryMs ?? 150);
    this.rejoinDelayMs = Number(rt.config.electorRejoinDelayMs ?? 1000);
    this.haveLock = false;
    this.inFlight = false;
    this.joinAt = 0;
    zk.onSessionExpired(() => {
      this.inFlight = false;
      if (!this.haveLock) return;
      this.haveLock = false;
      this.rt.log.info('elector lost the lock');
      this.app.becomeStandby();
    });
  }

  start() {
    const loop = () => {
      this.tryLock();
      this.rt.setTimer(this.retryMs, loop);
    };
    loop();
  }

  tryLock() {
    if (this.haveLock || this.inFlight || this.rt.now() < this.joinAt) return;
    this.inFlight = true;
    this.zk.request('ZkCreateLock', {}, (r) => {
      this.inFlight = false;
      if (!r.ok || !r.mine || this.haveLock) return;
      this.haveLock = true;
      this.rt.log.info('elector acquired the lock');
      this.app.becomeActive();
    });
  }

  /** Gives up the lock and waits a while before competing again. */
  rejoinElection() {
    if (this.haveLock) this.zk.request('ZkDeleteLock', {}, () => {});
    this.haveLock = false;
    this.joinAt = this.rt.now() + this.rejoinDelayMs;
  }
}
