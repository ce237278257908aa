// node.js — one ZabKV server (QuorumPeerMain). Everything it touches outside
// itself (network, timers, clock, randomness, disk) comes through `rt`.

import { QuorumPeer } from './quorumpeer.js';

/** @param {DDBench.NodeRuntime} rt the node runtime: id, nodes, config, send, onMessage, setTimer, now, random, disk, log, exposeState */
export function createNode(rt) {
  const peer = new QuorumPeer(rt);
  return {
    start() {
      peer.start();
    },
  };
}
