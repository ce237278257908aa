// node.js — one process of the RegionKV cluster. Its role follows from its id:
// `zk` is the coordination service (and shared filesystem), `master*` are the
// HMasters (one active, the others backups), `rs*` are the region servers, and
// `peer` is the peer cluster that edits are replicated to.

import { HMaster } from './hmaster.js';
import { HRegionServer } from './hregionserver.js';
import { ReplicationSink } from './replicationsink.js';
import { ZooKeeperServer } from './zookeeper.js';

/** @param {DDBench.NodeRuntime} rt the node runtime: id, nodes, config, send, onMessage, setTimer, now, random, disk, log, exposeState */
export function createNode(rt) {
  const id = rt.id;
  const server = id === 'zk' ? new ZooKeeperServer(rt) : id === 'peer' ? new ReplicationSink(rt) : id.startsWith('master') ? new HMaster(rt) : new HRegionServer(rt);
  return {
    start() {
      server.start();
    },
  };
}
