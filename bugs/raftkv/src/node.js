// node.js — one RaftKV member. Everything it touches outside itself (network,
// timers, clock, randomness, disk) comes through `rt`, the node runtime.

import { EtcdServer } from './server.js';

/** @param {DDBench.NodeRuntime} rt the node runtime: id, nodes, config, send, onMessage, setTimer, now, random, disk, log, exposeState */
export function createNode(rt) {
  const server = new EtcdServer(rt);
  return {
    start() {
      server.start();
    },
  };
}
