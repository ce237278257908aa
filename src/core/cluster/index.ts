import type { SystemEntry } from '../bugs/catalog';
import { miniatureEntry } from '../bugs/catalog';
import { UserError } from '../errors';
import type { BackendOptions } from './backend';
import { UpstreamCluster } from './upstream/upstream-cluster';
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

/**
 * The cluster of a system of the set: a miniature on the chosen backend, or a real upstream
 * system's built binaries (processes in the run's own network; no docker backend).
 */
export function createSystemCluster(system: SystemEntry, opts: Omit<ProcessClusterOptions, 'entry'>, backend: BackendOptions = {}): Cluster {
  if (system.manifest.upstream === undefined) return createCluster({ ...opts, entry: miniatureEntry(system.manifest) }, backend);
  if (backend.backend === 'docker') throw new UserError(`${system.id} is a real upstream system; it runs as sandboxed processes, not on the docker backend`);
  return new UpstreamCluster({ system, sourceDir: opts.sourceDir, runDir: opts.runDir, seed: opts.seed });
}
