// resourcemanager.js — the ResourceManager: HA state (ACTIVE / STANDBY) chosen
// by the embedded elector or by an admin, and the RMActiveServices that only
// run while ACTIVE: the state store, the scheduler, the resource tracker that
// takes NodeManager heartbeats, the application manager and the AM launcher.

import { ActiveStandbyElector, ZKCuratorManager } from './curator.js';
import { RMNodeImpl, statusUpdateWhenHealthy } from './rmnode.js';
import { RMStateStore } from './rmstatestore.js';
import { FifoScheduler } from './scheduler.js';

const FINAL = new Set(['FINISHED', 'FAILED', 'KILLED']);

export class ResourceManager {
  /** @param {DDBench.NodeRuntime} rt */
  constructor(rt) {
    this.rt = rt;
    this.automaticFailover = rt.config.automaticFailover !== false;
    this.haState = 'STANDBY';
    this.zk = new ZKCuratorManager(rt);
    this.elector = new ActiveStandbyElector(rt, this.zk, {
      becomeActive: () => this.transitionToActive('elector'),
      becomeStandby: () => this.transitionToStandby(true),
    });
    this.activeServices = new RMActiveServices(this);
  }

  start() {
    this.rt.onMessage((m) => this.onMessage(m));
    this.rt.exposeState(() => this.status());
    this.rt.log.info('resourcemanager started', { automaticFailover: this.automaticFailover });
    this.zk.start();
    if (this.automaticFailover) this.elector.start();
  }

  // ---- HA ------------------------------------------------------------------

  transitionToActive(by) {
    if (this.haState !== 'STANDBY') return;
    this.haState = 'TRANSITIONING';
    this.rt.log.info('transitioning to active', { by });
    const services = this.activeServices;
    services.start((ok) => {
      if (this.activeServices !== services || this.haState !== 'TRANSITIONING') return;
      if (!ok) {
        this.rt.log.warn('failed to transition to active');
        this.haState = 'ACTIVE';
        this.transitionToStandby(true);
        if (this.automaticFailover) this.elector.rejoinElection();
        return;
      }
      this.haState = 'ACTIVE';
      this.rt.log.info('transitioned to active', { epoch: services.store.epoch, apps: services.apps.size });
    });
  }

  transitionToStandby(initialize) {
    if (this.haState === 'STANDBY') return;
    this.activeServices.stop();
    this.haState = 'STANDBY';
    if (initialize) this.activeServices = new RMActiveServices(this);
    this.rt.log.info('transitioned to standby');
  }

  /** RMFatalEventDispatcher: a fatal error in an active service, raised by the services of the given epoch. */
  onFatal(type, cause, epoch) {
    this.rt.log.error('received RMFatalEvent', { type, cause, haState: this.haState });
    if (epoch < this.activeServices.store.epoch) {
      this.rt.log.info('ignoring RMFatalEvent of an earlier epoch', { epoch, current: this.activeServices.store.epoch });
      return;
    }
    this.handleTransitionToStandByInNewThread();
  }

  handleTransitionToStandByInNewThread() {
    if (this.haState !== 'ACTIVE') return;
    const runnable = this.activeServices.standByTransitionRunnable;
    this.rt.setTimer(0, () => runnable.run());
  }

  // ---- RPC -----------------------------------------------------------------

  onMessage({ from, type, body }) {
    if (from === this.zk.zk && this.zk.handle(type, body)) return;
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: req.reqId ?? null, ...res });
    if (type === 'GetServiceState') return reply({ ok: true, id: this.rt.id, haState: this.haState });
    if (type === 'TransitionToActive') {
      if (this.automaticFailover && !req.forcemanual) return reply({ ok: false, error: 'automatic failover is enabled; use forcemanual' });
      this.transitionToActive('admin');
      return reply({ ok: true });
    }
    if (type === 'TransitionToStandby') {
      if (this.automaticFailover && !req.forcemanual) return reply({ ok: false, error: 'automatic failover is enabled; use forcemanual' });
      this.transitionToStandby(true);
      if (this.automaticFailover) this.elector.rejoinElection();
      return reply({ ok: true });
    }
    if (this.haState !== 'ACTIVE') return reply({ ok: false, error: 'standby', haState: this.haState });
    this.activeServices.handle(from, type, req, reply);
  }

  status() {
    return { id: this.rt.id, haState: this.haState, session: this.zk.session, electorHasLock: this.elector.haveLock, ...this.activeServices.status() };
  }
}

class StandByTransitionRunnable {
  /** @param {ResourceManager} rm */
  constructor(rm) {
    this.rm = rm;
    this.hasAlreadyRun = false;
  }

  run() {
    if (this.hasAlreadyRun) return;
    this.hasAlreadyRun = true;
    this.rm.rt.log.info('transitioning RM to standby mode');
    this.rm.transitionToStandby(true);
    if (this.rm.automaticFailover) this.rm.elector.rejoinElection();
  }
}

export class RMActiveServices {
  /** @param {ResourceManager} rm */
  constructor(rm) {
    this.rm = rm;
    this.rt = rm.rt;
    this.nmExpiryMs = Number(this.rt.config.nmExpiryMs ?? 4000);
    this.store = new RMStateStore(this.rt, rm.zk, (type, cause, epoch) => rm.onFatal(type, cause, epoch));
    this.scheduler = new FifoScheduler(
      this.rt,
      (node, c) => this.launchAM(node, c),
      (c, st) => this.containerCompleted(c, st),
    );
    /** @type {Map<string, RMNodeImpl>} */
    this.rmNodes = new Map();
    /** @type {Map<string, any>} */
    this.apps = new Map();
    this.standByTransitionRunnable = new StandByTransitionRunnable(rm);
    this.running = false;
  }

  start(cb) {
    this.store.fence(() =>
      this.store.loadState((apps) => {
        if (!apps) return cb(false);
        for (const app of Object.values(apps ?? {})) this.recoverApplication(app);
        this.markUnregisteredNodesLost();
        this.running = true;
        this.store.startVerifyActive();
        const monitor = () => {
          if (!this.running) return;
          this.checkNodeLiveness();
          this.rt.setTimer(200, monitor);
        };
        this.rt.setTimer(200, monitor);
        cb(true);
      }),
    );
  }

  stop() {
    this.running = false;
    this.store.stop();
  }

  handle(from, type, req, reply) {
    switch (type) {
      case 'RegisterNodeManager':
        return reply(this.registerNodeManager(from, req));
      case 'NodeHeartbeat':
        return reply(this.nodeHeartbeat(from, req));
      case 'StartContainerResp':
        return;
      case 'SubmitApplication':
        return reply(this.submitApplication(req));
      case 'GetApplicationReport': {
        const app = this.apps.get(String(req.appId));
        return reply(app ? { ok: true, app: { ...app } } : { ok: false, error: 'application not found' });
      }
      case 'GetClusterNodes':
        return reply({ ok: true, nodes: [...this.rmNodes.values()].map((n) => n.toJSON()) });
      case 'RefreshNodes':
        return reply(this.refreshNodes(req));
      default:
        return reply({ ok: false, error: `unknown request ${type}` });
    }
  }

  // ---- ResourceTrackerService ----------------------------------------------

  registerNodeManager(nodeId, req) {
    const old = this.rmNodes.get(nodeId);
    if (old?.state === 'DECOMMISSIONED') return { ok: true, action: 'SHUTDOWN' };
    const node = new RMNodeImpl(nodeId, Number(req.capacity ?? 2), this.rt.now());
    if (old?.state === 'DECOMMISSIONING') node.state = 'DECOMMISSIONING';
    this.rmNodes.set(nodeId, node);
    this.scheduler.removeNode(nodeId, 're-registered');
    this.scheduler.addNode(nodeId, node.capacity);
    this.rt.log.info('node registered', { node: nodeId, state: node.state });
    return { ok: true, action: 'NORMAL' };
  }

  nodeHeartbeat(nodeId, req) {
    const rmNode = this.rmNodes.get(nodeId);
    if (!rmNode || rmNode.state === 'LOST') return { ok: true, action: 'RESYNC' };
    if (rmNode.state === 'DECOMMISSIONED') return { ok: true, action: 'SHUTDOWN' };
    rmNode.lastHeartbeat = this.rt.now();
    rmNode.responseId += 1;
    const state = statusUpdateWhenHealthy(rmNode, req, this);
    if (state === 'DECOMMISSIONED') return { ok: true, action: 'SHUTDOWN' };
    if (state === 'RUNNING') this.scheduler.nodeUpdate(nodeId);
    return { ok: true, action: 'NORMAL', responseId: rmNode.responseId };
  }

  handleContainerStatus(rmNode, containers) {
    for (const cs of containers) {
      const app = this.apps.get(cs.appId);
      if (cs.state === 'COMPLETE') {
        const c = this.scheduler.completedContainer(rmNode.nodeId, cs.containerId);
        if (c) this.containerCompleted(c, cs);
        continue;
      }
      if (!app || FINAL.has(app.state)) continue;
      rmNode.runningApplications.add(cs.appId);
      if (app.state === 'ACCEPTED' && app.amContainer === cs.containerId) {
        app.state = 'RUNNING';
        this.rt.log.info('application running', { app: app.appId, attempt: app.attempts, node: rmNode.nodeId });
      }
    }
  }

  deactivateNode(rmNode, finalState) {
    rmNode.state = finalState;
    this.rt.log.info('node deactivated', { node: rmNode.nodeId, state: finalState });
    this.scheduler.removeNode(rmNode.nodeId, finalState.toLowerCase());
  }

  checkNodeLiveness() {
    const now = this.rt.now();
    for (const n of this.rmNodes.values()) {
      if ((n.state === 'RUNNING' || n.state === 'DECOMMISSIONING') && now - n.lastHeartbeat > this.nmExpiryMs) this.deactivateNode(n, 'LOST');
    }
  }

  /** NodesListManager on start: a host of the include list that has not registered is reported LOST until it does. */
  markUnregisteredNodesLost() {
    for (const id of this.rt.nodes.filter((n) => n.startsWith('nm'))) {
      if (this.rmNodes.has(id)) continue;
      const node = new RMNodeImpl(id, 0, this.rt.now());
      node.state = 'LOST';
      this.rmNodes.set(id, node);
      this.rt.log.info('unregistered node marked lost', { node: id });
    }
  }

  refreshNodes(req) {
    const graceful = req.graceful !== false;
    for (const id of req.decommission ?? []) {
      const n = this.rmNodes.get(String(id));
      if (!n || (n.state !== 'RUNNING' && n.state !== 'DECOMMISSIONING')) continue;
      if (graceful) {
        n.state = 'DECOMMISSIONING';
        this.rt.log.info('node decommissioning', { node: n.nodeId, runningApplications: [...n.runningApplications] });
      } else {
        this.deactivateNode(n, 'DECOMMISSIONED');
      }
    }
    return { ok: true };
  }

  // ---- RMAppManager ----------------------------------------------------------

  submitApplication(req) {
    const appId = String(req.appId);
    if (this.apps.has(appId)) return { ok: true, appId };
    const app = { appId, durationMs: Number(req.durationMs ?? 1000), maxAttempts: Number(req.maxAttempts ?? 2), state: 'NEW_SAVING', attempts: 0, failures: 0, amContainer: null, amNode: null, diagnostics: '' };
    this.apps.set(appId, app);
    this.rt.log.info('application submitted', { app: appId, maxAttempts: app.maxAttempts });
    this.store.storeApplication(this.record(app), (r) => {
      if (!r.ok || app.state !== 'NEW_SAVING') return;
      app.state = 'ACCEPTED';
      this.newAttempt(app);
    });
    return { ok: true, appId };
  }

  recoverApplication(stored) {
    const app = { ...stored, amContainer: null, amNode: null };
    this.apps.set(app.appId, app);
    if (FINAL.has(app.state)) return;
    app.state = 'ACCEPTED';
    this.rt.log.info('application recovered', { app: app.appId });
    this.newAttempt(app);
  }

  newAttempt(app) {
    app.attempts += 1;
    app.amContainer = null;
    app.amNode = null;
    this.scheduler.addApplicationAttempt(app.appId, app.attempts);
  }

  /** ApplicationMasterLauncher: asks the node to start the attempt's AM container. */
  launchAM(node, c) {
    const app = this.apps.get(c.appId);
    app.amContainer = c.containerId;
    app.amNode = node;
    this.rt.send(node, 'StartContainer', { containerId: c.containerId, appId: c.appId, durationMs: app.durationMs });
  }

  record(app) {
    const { appId, durationMs, maxAttempts, state, attempts, failures, diagnostics } = app;
    return { appId, durationMs, maxAttempts, state, attempts, failures, diagnostics };
  }

  containerCompleted(c, status) {
    const app = this.apps.get(c.appId);
    if (!app || FINAL.has(app.state) || c.attempt !== app.attempts) return;
    this.rt.log.info('am container completed', { app: app.appId, attempt: c.attempt, container: c.containerId, exitStatus: status.exitStatus ?? null, diagnostics: status.diagnostics ?? '' });
    if (status.exitStatus === 0) return this.finishApplication(app, 'FINISHED', '');
    app.failures += 1;
    app.diagnostics = `attempt ${c.attempt} failed: ${status.diagnostics ?? 'exit ' + status.exitStatus}`;
    if (app.failures >= app.maxAttempts) return this.finishApplication(app, 'FAILED', app.diagnostics);
    app.state = 'ACCEPTED';
    this.newAttempt(app);
  }

  finishApplication(app, state, diagnostics) {
    app.state = state;
    app.diagnostics = diagnostics;
    this.scheduler.removeApplication(app.appId);
    for (const n of this.rmNodes.values()) n.runningApplications.delete(app.appId);
    this.rt.log.info('application ' + state.toLowerCase(), { app: app.appId, attempts: app.attempts, diagnostics });
    this.store.storeApplication(this.record(app), () => {});
  }

  status() {
    return {
      epoch: this.store.epoch,
      storeState: this.store.state,
      nodes: [...this.rmNodes.values()].map((n) => ({ ...n.toJSON(), allocatedContainers: this.scheduler.getSchedulerNode(n.nodeId)?.getNumContainers() ?? 0 })),
      apps: [...this.apps.values()].map((a) => ({ appId: a.appId, state: a.state, attempts: a.attempts, amNode: a.amNode })),
    };
  }
}
