import path from 'node:path';
import { miniatureEntry, scenarioFile, type SystemEntry } from '../bugs/catalog';
import type { SystemManifest } from '../bugs/manifest';
import type { Scenario } from '../scenario/scenario';
import { loadScenario } from '../scenario/loader';
import type { Json, SystemModule } from '../../runtime/types';
import { snapshotSource } from './snapshot-cache';
import { loadSystemModule } from './system-module';

/** Everything a simulated run needs, loaded once for many seeds. */
export interface SimTarget {
  system: SystemModule;
  /** Where log source locations are relative to: a content snapshot of the source folder. */
  srcRoot: string;
  nodes: string[];
  /** The system's config with the scenario's overrides. */
  config: Record<string, Json>;
  scenario: Scenario;
}

/** Loads a system's code (as it is in `sourceDir` now) and one of its scenarios for simulation. */
export function prepareTarget(system: SystemEntry, sourceDir: string, scenarioName: string): Promise<SimTarget> {
  return prepareTargetFile(system, sourceDir, scenarioFile(system, scenarioName));
}

/** As prepareTarget, with a scenario module from anywhere (benchmarks, tests). */
export function prepareTargetFile(system: SystemEntry, sourceDir: string, scenarioPath: string): Promise<SimTarget> {
  return loadTarget(system.manifest, snapshotSource(sourceDir), scenarioPath);
}

/** Loads a target from a snapshot already made (snapshot-cache.ts): what a sandboxed simulation, which cannot make one, does. */
export async function loadTarget(manifest: SystemManifest, srcRoot: string, scenarioPath: string): Promise<SimTarget> {
  const scenario = await loadScenario(scenarioPath);
  return {
    system: await loadSystemModule(path.join(srcRoot, miniatureEntry(manifest))),
    srcRoot,
    nodes: manifest.nodes,
    config: { ...manifest.config, ...scenario.config },
    scenario,
  };
}
