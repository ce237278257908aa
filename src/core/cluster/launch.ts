import * as path from 'node:path';
import { DEFAULT_SEED, newRunId, runsDir } from '../bugs/runs';
import { resolveWorkspace } from '../bugs/workspace';
import { backendFor, type BackendOptions } from './backend';
import { createSystemCluster } from './index';
import type { Cluster } from './types';

/** Starts the workspace's cluster (its current code) for a person to watch and poke. */
export async function launchWorkspaceCluster(dir: string, opts: { seed?: number; inspect?: boolean; backend?: BackendOptions } = {}): Promise<Cluster> {
  const { info, system } = await resolveWorkspace(dir);
  const m = system.manifest;
  const cluster = createSystemCluster(system, {
    sourceDir: info.dir,
    nodes: m.nodes,
    config: m.config,
    runDir: path.join(runsDir(info.dir), `up-${newRunId()}`),
    seed: opts.seed ?? DEFAULT_SEED,
    inspect: opts.inspect,
  }, backendFor(system, opts.backend));
  try {
    await cluster.start();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
