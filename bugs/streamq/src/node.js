// node.js — one StreamQ server. Everything it touches outside itself (network,
// timers, clock, randomness, disk) comes through `rt`, the node runtime.

import { JetStream } from './jetstream.js';

/** @param {DDBench.NodeRuntime} rt the node runtime */
export function createNode(rt) {
  const js = new JetStream(rt);
  return {
    start() {
      js.start();
    },
  };
}
