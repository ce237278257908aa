// node.js — one RangeKV node (a store). Everything it touches outside itself
// (network, timers, clock, randomness, disk) comes through `rt`.

import { Store } from './store.js';

/** @param {DDBench.NodeRuntime} rt the node runtime */
export function createNode(rt) {
  const store = new Store(rt);
  return {
    start() {
      store.start();
    },
  };
}
