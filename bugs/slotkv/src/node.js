// node.js — one SlotKV node. Everything it touches outside itself (network,
// timers, clock, randomness, disk) comes through `rt`, the node runtime.

import { Server } from './server.js';

/** @param {DDBench.NodeRuntime} rt the node runtime */
export function createNode(rt) {
  const server = new Server(rt);
  return {
    start() {
      server.start();
    },
  };
}
