// node.js — one IsrLog node: the controller (`controller`) or a broker. Everything
// it touches outside itself (network, timers, clock, randomness, disk) comes
// through `rt`.

import { KafkaController } from './controller.js';
import { KafkaServer } from './broker.js';

/** @param {DDBench.NodeRuntime} rt the node runtime: id, nodes, config, send, onMessage, setTimer, now, random, disk, log, exposeState */
export function createNode(rt) {
  const server = rt.id === String(rt.config.controller ?? 'controller') ? new KafkaController(rt) : new KafkaServer(rt);
  return {
    start() {
      server.start();
    },
  };
}
