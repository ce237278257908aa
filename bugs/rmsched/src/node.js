// node.js — one process of the cluster. `rm*` nodes run a ResourceManager,
// `nm*` nodes a NodeManager and `zk` the ZooKeeper ensemble that holds the
// elector lock and the RM state store. Everything outside the process
// (network, timers, clock, randomness, disk) comes through `rt`.

import { NodeManager } from './nodemanager.js';
import { ResourceManager } from './resourcemanager.js';
import { ZooKeeperServer } from './zookeeper.js';

/** @param {DDBench.NodeRuntime} rt the node runtime */
export function createNode(rt) {
  const role = rt.id.startsWith('rm') ? ResourceManager : rt.id.startsWith('nm') ? NodeManager : ZooKeeperServer;
  const server = new role(rt);
  return {
    start() {
      server.start();
    },
  };
}
