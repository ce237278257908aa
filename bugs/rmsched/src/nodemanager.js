// nodemanager.js — a NodeManager: registers with the active RM, heartbeats its
// container statuses, and runs the containers the RM's AM launcher starts on
// it (an AM here just runs for its durationMs and exits 0). Its RM proxy fails
// over between the configured RMs when one answers "standby" or not at all.

export class NodeManager {
  /** @param {DDBench.NodeRuntime} rt */
  constructor(rt) {
    this.rt = rt;
    this.rms = rt.nodes.filter((n) => n.startsWith('rm'));
    this.rmIndex = 0;
    this.heartbeatMs = Number(rt.config.nmHeartbeatMs ?? 250);
    this.capacity = Number(rt.config.nmCapacity ?? 2);
    this.registered = false;
    this.shutdown = false;
    /** @type {Map<string, {containerId: string, appId: string, state: string, exitStatus: number | null, reportedIn: number}>} */
    this.containers = new Map();
    this.seq = 0;
    this.outstanding = null;
  }

  get rm() {
    return this.rms[this.rmIndex];
  }

  start() {
    this.rt.onMessage((m) => this.onMessage(m));
    this.rt.exposeState(() => ({ id: this.rt.id, rm: this.rm, registered: this.registered, shutdown: this.shutdown, containers: [...this.containers.values()] }));
    this.rt.log.info('nodemanager started', { capacity: this.capacity });
    const loop = () => {
      if (this.shutdown) return;
      this.heartbeat();
      this.rt.setTimer(this.heartbeatMs, loop);
    };
    loop();
  }

  failover(reason) {
    this.rmIndex = (this.rmIndex + 1) % this.rms.length;
    this.outstanding = null;
    this.rt.log.info('failing over to the next RM', { rm: this.rm, reason });
  }

  heartbeat() {
    if (this.outstanding) {
      if (this.rt.now() - this.outstanding.at < 1000) return;
      this.failover('timeout');
    }
    const seq = ++this.seq;
    this.outstanding = { seq, at: this.rt.now() };
    if (!this.registered) {
      this.rt.send(this.rm, 'RegisterNodeManager', { reqId: seq, capacity: this.capacity });
      return;
    }
    const containers = [...this.containers.values()].map((c) => {
      if (c.state === 'COMPLETE' && c.reportedIn === 0) c.reportedIn = seq;
      return { containerId: c.containerId, appId: c.appId, state: c.state, exitStatus: c.exitStatus };
    });
    this.rt.send(this.rm, 'NodeHeartbeat', { reqId: seq, containers });
  }

  onMessage({ from, type, body }) {
    if (type === 'StartContainer') return this.startContainer(from, body);
    if (type !== 'RegisterNodeManagerResp' && type !== 'NodeHeartbeatResp') return;
    if (!this.outstanding || body.reqId !== this.outstanding.seq || from !== this.rm) return;
    this.outstanding = null;
    if (!body.ok) {
      if (body.error === 'standby') this.failover('standby');
      return;
    }
    if (type === 'RegisterNodeManagerResp' && body.action === 'NORMAL') {
      this.registered = true;
      this.rt.log.info('registered with the RM', { rm: from });
      return;
    }
    switch (body.action) {
      case 'NORMAL':
        for (const c of [...this.containers.values()]) if (c.state === 'COMPLETE' && c.reportedIn !== 0 && c.reportedIn <= body.reqId) this.containers.delete(c.containerId);
        return;
      case 'RESYNC':
        this.rt.log.info('resync requested by the RM', { rm: from, containers: this.containers.size });
        this.killAll();
        this.registered = false;
        return;
      case 'SHUTDOWN':
        this.rt.log.info('shutdown requested by the RM', { rm: from, containers: this.containers.size });
        this.killAll();
        this.shutdown = true;
        return;
    }
  }

  startContainer(from, { containerId, appId, durationMs }) {
    if (this.shutdown || this.containers.has(containerId)) return;
    const c = { containerId, appId, state: 'RUNNING', exitStatus: null, reportedIn: 0 };
    this.containers.set(containerId, c);
    this.rt.log.info('container started', { container: containerId, app: appId });
    this.rt.send(from, 'StartContainerResp', { containerId, ok: true });
    this.rt.setTimer(Number(durationMs), () => {
      if (c.state !== 'RUNNING' || this.containers.get(containerId) !== c) return;
      c.state = 'COMPLETE';
      c.exitStatus = 0;
      this.rt.log.info('container finished', { container: containerId, app: appId });
    });
  }

  killAll() {
    for (const c of this.containers.values()) {
      if (c.state === 'RUNNING') this.rt.log.info('container killed', { container: c.containerId, app: c.appId });
    }
    this.containers.clear();
  }
}
