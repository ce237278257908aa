import * as path from 'node:path';
import { findBug, findSystem, loadCatalog, type BugEntry, type Catalog, type SystemEntry } from '../bugs/catalog';
import { DDBENCH_DIR, readWorkspace, type WorkspaceInfo } from '../bugs/workspace';
import { createCluster, type BackendOptions } from '../cluster';
import type { Cluster } from '../cluster/types';
import { backendFor } from './backend';
import { newRunId } from './runid';
import { DEFAULT_SEED } from './trial';

export interface ResolvedWorkspace {
  info: WorkspaceInfo;
  catalog: Catalog;
  bug: BugEntry;
  system: SystemEntry;
}

/** A workspace with its bug and system from the catalogue. */
export async function resolveWorkspace(dir: string, catalog?: Catalog): Promise<ResolvedWorkspace> {
  const info = await readWorkspace(dir);
  const cat = catalog ?? (await loadCatalog());
  const bug = findBug(cat, info.bugId);
  return { info, catalog: cat, bug, system: findSystem(cat, bug.system) };
}

export function runsDir(workspaceDir: string): string {
  return path.join(workspaceDir, DDBENCH_DIR, 'runs');
}

/** Starts the workspace's cluster (its current code) for a person to watch and poke. */
export async function launchWorkspaceCluster(dir: string, opts: { seed?: number; inspect?: boolean; backend?: BackendOptions } = {}): Promise<Cluster> {
  const { info, system } = await resolveWorkspace(dir);
  const m = system.manifest;
  const cluster = createCluster({
    sourceDir: info.dir,
    entry: m.entry,
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
