// zookeeper.js — a single-server ZooKeeper, reduced to what the RMs use:
// sessions kept alive by pings, the ephemeral ActiveStandbyElectorLock, and
// the ZKRMStateStore root whose fencing epoch plays the part of the root ACL
// (an RM that is not the last one to fence gets NoAuth, reported as FENCED).

export class ZooKeeperServer {
  /** @param {DDBench.NodeRuntime} rt */
  constructor(rt) {
    this.rt = rt;
    this.sessionTimeoutMs = Number(rt.config.zkSessionTimeoutMs ?? 3000);
    /** @type {Map<number, {owner: string, lastSeen: number}>} */
    this.sessions = new Map();
    this.nextSession = 1;
    /** @type {{session: number, owner: string} | null} */
    this.lock = null;
    this.store = { epoch: 0, fencedBy: null, apps: {} };
  }

  start() {
    this.rt.onMessage((m) => this.onMessage(m));
    this.rt.exposeState(() => ({
      id: this.rt.id,
      sessions: [...this.sessions].map(([id, s]) => ({ id, owner: s.owner })),
      lock: this.lock,
      epoch: this.store.epoch,
      fencedBy: this.store.fencedBy,
      apps: this.store.apps,
    }));
    this.rt.log.info('zookeeper started');
    const tick = () => {
      this.expireSessions();
      this.rt.setTimer(100, tick);
    };
    this.rt.setTimer(100, tick);
  }

  expireSessions() {
    const now = this.rt.now();
    for (const [id, s] of this.sessions) {
      if (now - s.lastSeen <= this.sessionTimeoutMs) continue;
      this.sessions.delete(id);
      this.rt.log.info('session expired', { session: id, owner: s.owner });
      if (this.lock?.session === id) {
        this.rt.log.info('ephemeral lock released', { owner: this.lock.owner });
        this.lock = null;
      }
    }
  }

  onMessage({ from, type, body }) {
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { xid: req.xid ?? null, session: req.session ?? null, ...res });
    if (type === 'ZkConnect') {
      const id = this.nextSession++;
      this.sessions.set(id, { owner: from, lastSeen: this.rt.now() });
      this.rt.log.info('session established', { session: id, owner: from });
      return reply({ ok: true, session: id });
    }
    this.expireSessions();
    const s = this.sessions.get(req.session);
    if (!s) return reply({ ok: false, error: 'SESSION_EXPIRED' });
    s.lastSeen = this.rt.now();
    switch (type) {
      case 'ZkPing':
        return reply({ ok: true });
      case 'ZkCreateLock':
        if (!this.lock) {
          this.lock = { session: req.session, owner: from };
          this.rt.log.info('ephemeral lock created', { owner: from, session: req.session });
        }
        return reply({ ok: true, owner: this.lock.owner, mine: this.lock.session === req.session });
      case 'ZkDeleteLock':
        if (this.lock?.session === req.session) {
          this.rt.log.info('ephemeral lock released', { owner: this.lock.owner });
          this.lock = null;
        }
        return reply({ ok: true });
      case 'ZkMulti':
        return reply(this.storeOp(from, req));
      default:
        return reply({ ok: false, error: `unknown request ${type}` });
    }
  }

  /** The ZKRMStateStore operations; every write checks the fencing epoch first. */
  storeOp(from, req) {
    const st = this.store;
    if (req.op === 'fence') {
      st.epoch += 1;
      st.fencedBy = from;
      this.rt.log.info('store fenced', { by: from, epoch: st.epoch });
      return { ok: true, epoch: st.epoch };
    }
    if (req.epoch !== st.epoch) return { ok: false, error: 'FENCED', epoch: st.epoch, fencedBy: st.fencedBy };
    switch (req.op) {
      case 'verifyActive':
        return { ok: true };
      case 'load':
        return { ok: true, apps: st.apps };
      case 'storeApp':
        st.apps[req.app.appId] = req.app;
        return { ok: true };
      default:
        return { ok: false, error: `unknown op ${req.op}` };
    }
  }
}
