// node.js — one SwimGossip member. Everything it touches outside itself (network,
// timers, clock, randomness, disk) comes through `rt`, the node runtime.

import { Memberlist } from './memberlist.js';

/** @param {DDBench.NodeRuntime} rt the node runtime: id, nodes, config, send, onMessage, setTimer, now, random, disk, log, exposeState */
export function createNode(rt) {
  const m = new Memberlist(rt);
  return {
    start() {
      m.create();
    },
  };
}
