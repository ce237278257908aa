// node.js — one DynaKV node. Everything it touches outside itself (network,
// timers, clock, randomness, disk) comes through `rt`, the node runtime.

import { StorageService } from './storage-service.js';

/** @param {DDBench.NodeRuntime} rt the node runtime: id, nodes, config, send, onMessage, setTimer, now, random, disk, log, exposeState */
export function createNode(rt) {
  const service = new StorageService(rt);
  return {
    start() {
      service.start();
    },
  };
}
