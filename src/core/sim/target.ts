import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scenarioFile, type SystemEntry } from '../bugs/catalog';
import type { Scenario } from '../scenario/scenario';
import { loadScenario } from '../scenario/loader';
import type { Json, SystemModule } from '../../runtime/types';
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

/** Folders that are never part of a system's code. */
const SKIPPED = new Set(['.ddbench', '.git', 'node_modules']);

function listFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const name = rel === '' ? entry.name : path.join(rel, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(dir, name));
    else if (entry.isFile()) out.push(name);
  }
  return out.sort();
}

/**
 * A copy of `sourceDir` under a folder named by its content hash. Node caches ES
 * modules by URL for the life of the process, so importing the workspace itself
 * again after an edit (in the editor's long-lived host) would run the old code; a
 * changed file gives a new folder and a fresh import, an unchanged one reuses it.
 */
export function snapshotSource(sourceDir: string): string {
  const files = listFiles(sourceDir);
  const hash = createHash('sha256');
  const contents = files.map((file) => fs.readFileSync(path.join(sourceDir, file)));
  files.forEach((file, i) => hash.update(`${file}\u0000${contents[i]!.length}\u0000`).update(contents[i]!));
  const dir = path.join(os.tmpdir(), 'ddbench-sim', hash.digest('hex').slice(0, 24));
  if (fs.existsSync(dir)) return dir;
  // Written under a temporary name and renamed, so a concurrent run never imports a half-copied tree.
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const temp = fs.mkdtempSync(`${dir}.tmp-`);
  files.forEach((file, i) => {
    fs.mkdirSync(path.dirname(path.join(temp, file)), { recursive: true });
    fs.writeFileSync(path.join(temp, file), contents[i]!);
  });
  try {
    fs.renameSync(temp, dir);
  } catch {
    // Another process made the same snapshot first; its copy is identical.
    fs.rmSync(temp, { recursive: true, force: true });
  }
  return dir;
}

/** Loads a system's code (as it is in `sourceDir` now) and one of its scenarios for simulation. */
export function prepareTarget(system: SystemEntry, sourceDir: string, scenarioName: string): Promise<SimTarget> {
  return prepareTargetFile(system, sourceDir, scenarioFile(system, scenarioName));
}

/** As prepareTarget, with a scenario module from anywhere (benchmarks, tests). */
export async function prepareTargetFile(system: SystemEntry, sourceDir: string, scenarioPath: string): Promise<SimTarget> {
  const scenario = await loadScenario(scenarioPath);
  const srcRoot = snapshotSource(sourceDir);
  const m = system.manifest;
  return {
    system: await loadSystemModule(path.join(srcRoot, m.entry)),
    srcRoot,
    nodes: m.nodes,
    config: { ...m.config, ...scenario.config },
    scenario,
  };
}
