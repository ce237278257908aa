// scheduler.js — a FIFO scheduler. Pending AM requests are placed on a node
// when that node heartbeats (NODE_UPDATE), as in YARN's schedulers; each
// SchedulerNode keeps the containers allocated on it until they complete.

export class SchedulerNode {
  constructor(nodeId, capacity) {
    this.nodeId = nodeId;
    this.capacity = capacity;
    /** @type {Map<string, {containerId: string, appId: string, isAM: boolean}>} */
    this.launchedContainers = new Map();
  }

  getNumContainers() {
    return this.launchedContainers.size;
  }
}

export class FifoScheduler {
  /** @param {DDBench.NodeRuntime} rt @param {(node: string, c: any) => void} launch @param {(c: any, status: any) => void} completed */
  constructor(rt, launch, completed) {
    this.rt = rt;
    this.launch = launch;
    this.completed = completed;
    /** @type {Map<string, SchedulerNode>} */
    this.nodes = new Map();
    /** @type {Array<{appId: string, attempt: number}>} */
    this.pending = [];
    this.containerSeq = 0;
  }

  addNode(nodeId, capacity) {
    this.nodes.set(nodeId, new SchedulerNode(nodeId, capacity));
  }

  getSchedulerNode(nodeId) {
    return this.nodes.get(nodeId);
  }

  /** Takes a node out of scheduling; whatever ran there is lost. */
  removeNode(nodeId, reason) {
    const node = this.nodes.get(nodeId);
    if (!node) return;
    this.nodes.delete(nodeId);
    for (const c of node.launchedContainers.values()) this.completed(c, { state: 'COMPLETE', exitStatus: -100, diagnostics: `Container released on a ${reason} node` });
  }

  addApplicationAttempt(appId, attempt) {
    this.pending.push({ appId, attempt });
  }

  removeApplication(appId) {
    this.pending = this.pending.filter((r) => r.appId !== appId);
  }

  /** NODE_UPDATE: a RUNNING node heartbeated and may take new containers. */
  nodeUpdate(nodeId) {
    const node = this.nodes.get(nodeId);
    if (!node) return;
    while (this.pending.length > 0 && node.launchedContainers.size < node.capacity) {
      const req = this.pending.shift();
      const c = { containerId: `container_${req.appId}_${String(req.attempt).padStart(2, '0')}_${++this.containerSeq}`, appId: req.appId, attempt: req.attempt, isAM: true, node: nodeId };
      node.launchedContainers.set(c.containerId, c);
      this.rt.log.info('assigned container', { app: req.appId, attempt: req.attempt, container: c.containerId, node: nodeId });
      this.launch(nodeId, c);
    }
  }

  /** A container finished or was killed; frees its place on the node. */
  completedContainer(nodeId, containerId) {
    const node = this.nodes.get(nodeId);
    const c = node?.launchedContainers.get(containerId);
    if (!c) return null;
    node.launchedContainers.delete(containerId);
    return c;
  }
}
