import { ProcessCluster, type ProcessClusterOptions } from './process-cluster';
import type { Cluster } from './types';

export type { Cluster, ClusterClient, ClusterOptions, LinkFault, NodeInfo, NodeStatus } from './types';
export { ProcessCluster, type ProcessClusterOptions } from './process-cluster';
export { Router, type RouterOptions, type EndpointInfo } from './router';
export { reapLeftovers, registryDir, type ReapReport } from './process-registry';
export { locateLiveHost } from './live-host-path';

/** Creates a cluster on the default backend (processes). Call start() on it, and always stop(). */
export function createCluster(opts: ProcessClusterOptions): Cluster {
  return new ProcessCluster(opts);
}
