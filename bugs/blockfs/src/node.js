// node.js — one process of the BlockFS cluster: `nn` and `nn2` are the
// NameNodes (one active, one standby), every other node is a DataNode.

import { DataNode } from './datanode.js';
import { NameNode } from './namenode.js';

/** @param {DDBench.NodeRuntime} rt the node runtime: id, nodes, config, send, onMessage, setTimer, now, random, disk, log, exposeState */
export function createNode(rt) {
  const server = rt.id.startsWith('nn') ? new NameNode(rt) : new DataNode(rt);
  return {
    start() {
      server.start();
    },
  };
}
