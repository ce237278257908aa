import type { BackendOptions } from './backend';
import { DockerCluster } from './docker-cluster';
import { ProcessCluster, type ProcessClusterOptions } from './process-cluster';
import type { Cluster } from './types';

export type { BackendName, Cluster, ClusterClient, ClusterOptions, LinkFault, NetemRule, NetworkFaults, NodeInfo, NodeStatus } from './types';
export { BACKENDS } from './types';
export { ProcessCluster, type ProcessClusterOptions } from './process-cluster';
export { DockerCluster, type DockerBackendOptions, type DockerClusterOptions } from './docker-cluster';
export { Router, type RouterOptions, type EndpointInfo } from './router';
export { reapLeftovers, registryDir, type ReapReport } from './process-registry';
export { reapDockerLeftovers, type DockerReapReport } from './docker/run-labels';
export { connectEngine } from './docker/engine';
export { locateLiveHost } from './live-host-path';
export { backendFor, backendOptions, type BackendOptions } from './backend';

/** Creates a cluster on the chosen backend (processes by default). Call start() on it, and always stop(). */
export function createCluster(opts: ProcessClusterOptions, backend: BackendOptions = {}): Cluster {
  return backend.backend === 'docker' ? new DockerCluster({ ...opts, docker: backend.docker }) : new ProcessCluster(opts);
}
