import os from 'node:os';
import type Docker from 'dockerode';
import { idempotent } from './engine';
import { isAlive } from '../../pid';

/**
 * The docker backend's registry of runs is the engine itself: every container and
 * network a run creates carries these labels, so a later run finds what a crashed
 * harness left (reapDockerLeftovers) without any file of ours.
 */
export const LABEL = {
  run: 'ddbench.run',
  node: 'ddbench.node',
  harnessPid: 'ddbench.harness-pid',
  /** A pid means something only on its own host (several machines may share an engine). */
  harnessHost: 'ddbench.harness-host',
  runDir: 'ddbench.run-dir',
} as const;

export function runLabels(runId: string, runDir: string): Record<string, string> {
  return {
    [LABEL.run]: runId,
    [LABEL.harnessPid]: String(process.pid),
    [LABEL.harnessHost]: os.hostname(),
    [LABEL.runDir]: runDir,
  };
}


/** Whether the harness that labelled an object is known to be dead (on this host, not us, no such pid). */
function orphaned(labels: Record<string, string> | undefined): boolean {
  const pid = Number(labels?.[LABEL.harnessPid]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  return labels?.[LABEL.harnessHost] === os.hostname() && pid !== process.pid && !isAlive(pid);
}

export interface DockerReapReport {
  containers: string[];
  networks: string[];
}

/** Removes the containers, then the networks, of every run whose harness on this host is dead. */
export async function reapDockerLeftovers(docker: Docker): Promise<DockerReapReport> {
  const report: DockerReapReport = { containers: [], networks: [] };
  const containers = await docker.listContainers({ all: true, filters: { label: [LABEL.harnessPid] } });
  for (const c of containers) {
    if (!orphaned(c.Labels)) continue;
    await idempotent(() => docker.getContainer(c.Id).remove({ force: true }));
    report.containers.push(c.Names[0]?.replace(/^\//, '') ?? c.Id);
  }
  const networks = await docker.listNetworks({ filters: { label: [LABEL.harnessPid] } });
  for (const n of networks) {
    if (!orphaned(n.Labels)) continue;
    await idempotent(() => docker.getNetwork(n.Id).remove());
    report.networks.push(n.Name);
  }
  return report;
}

/** Removes every container, then the network, of one run (force: running and paused ones too). */
export async function removeRun(docker: Docker, runId: string): Promise<void> {
  const filters = { label: [`${LABEL.run}=${runId}`] };
  const containers = await docker.listContainers({ all: true, filters });
  await Promise.all(containers.map((c) => idempotent(() => docker.getContainer(c.Id).remove({ force: true }))));
  const networks = await docker.listNetworks({ filters });
  for (const n of networks) await idempotent(() => docker.getNetwork(n.Id).remove());
}
