// rmnode.js — RMNodeImpl: the RM's view of one NodeManager, updated by its
// heartbeats. States: RUNNING, DECOMMISSIONING (graceful decommission: no new
// containers, the node leaves once nothing runs there), DECOMMISSIONED, LOST.

export class RMNodeImpl {
  constructor(nodeId, capacity, now) {
    this.nodeId = nodeId;
    this.capacity = capacity;
    this.state = 'RUNNING';
    /** @type {Set<string>} applications with containers on this node */
    this.runningApplications = new Set();
    this.lastHeartbeat = now;
    this.responseId = 0;
  }

  toJSON() {
    return { nodeId: this.nodeId, state: this.state, runningApplications: [...this.runningApplications], capacity: this.capacity };
  }
}

/**
 * StatusUpdateWhenHealthyTransition for a RUNNING or DECOMMISSIONING node.
 * Returns the node's state after the heartbeat.
 * @param {RMNodeImpl} rmNode
 * @param {{containers: any[]}} status the heartbeat's node status
 * @param {any} ctx the RM's active services
 */
export function statusUpdateWhenHealthy(rmNode, status, ctx) {
  if (rmNode.state === 'DECOMMISSIONING') {
    if (rmNode.runningApplications.size === 0 && !hasScheduledAMContainers(rmNode, ctx.scheduler)) {
      ctx.deactivateNode(rmNode, 'DECOMMISSIONED');
      return 'DECOMMISSIONED';
    }
  }
  ctx.handleContainerStatus(rmNode, status.containers ?? []);
  return rmNode.state;
}

function hasScheduledAMContainers(rmNode, scheduler) {
  const node = scheduler.getSchedulerNode(rmNode.nodeId);
  return node ? [...node.launchedContainers.values()].some((c) => c.isAM) : false;
}
