import { DockerCluster, type DockerBackendOptions } from './docker-cluster';
import { ProcessCluster, type ProcessClusterOptions } from './process-cluster';
import type { BackendName, Cluster } from './types';

export type { BackendName, Cluster, ClusterClient, ClusterOptions, LinkFault, NetemRule, NetworkFaults, NodeInfo, NodeStatus } from './types';
export { BACKENDS } from './types';
export { ProcessCluster, type ProcessClusterOptions } from './process-cluster';
export { DockerCluster, type DockerBackendOptions, type DockerClusterOptions } from './docker-cluster';
export { Router, type RouterOptions, type EndpointInfo } from './router';
export { reapLeftovers, registryDir, type ReapReport } from './process-registry';
export { reapDockerLeftovers, type DockerReapReport } from './docker/run-labels';
export { connectEngine } from './docker/engine';
export { locateLiveHost } from './live-host-path';

/** Where a cluster's nodes run, and the backend's own settings. */
export interface BackendOptions {
  /** Default: process. */
  backend?: BackendName;
  docker?: DockerBackendOptions;
}

/** Backend options from a backend's name (a setting, a flag) and, for docker, its own options. */
export function backendOptions(backend: BackendName, docker: DockerBackendOptions = {}): BackendOptions {
  return backend === 'docker' ? { backend, docker } : { backend };
}

/** Creates a cluster on the chosen backend (processes by default). Call start() on it, and always stop(). */
export function createCluster(opts: ProcessClusterOptions, backend: BackendOptions = {}): Cluster {
  return backend.backend === 'docker' ? new DockerCluster({ ...opts, docker: backend.docker }) : new ProcessCluster(opts);
}
