import fs from 'node:fs';
import path from 'node:path';
import { resolveWorkspace } from '../bugs/workspace';
import { runsDir } from '../bugs/runs';
import type { SimOptionsInput } from './options';
import type { ScheduleFile } from './replay';
import { replaySeed, shrinkSeed, simulateSeeds, type SandboxedReplay, type SandboxedShrink } from './sandboxed';
import type { SeedSearchOptions, SeedSearchResult } from './search';
import type { ShrinkOptions } from './shrink';

export interface WorkspaceSimOptions extends SeedSearchOptions {
  /** A scenario of the system other than the bug's reproducer (a regression check, say). */
  scenario?: string;
}

export interface WorkspaceSimResult extends SeedSearchResult {
  bugId: string;
  dir: string;
}

/** Runs seeds of the bug's reproducer (or another scenario) in simulation against the workspace's code as it is now. */
export async function simulateWorkspace(dir: string, opts: WorkspaceSimOptions): Promise<WorkspaceSimResult> {
  const ws = await resolveWorkspace(dir);
  const scenario = opts.scenario ?? ws.bug.manifest.reproducer.scenario;
  return { bugId: ws.bug.id, dir: ws.info.dir, ...(await simulateSeeds(ws.system, ws.info.dir, scenario, opts)) };
}

/** Shrinks a failing seed of the workspace's reproducer (or another scenario) to the decisions that matter. */
export async function shrinkWorkspaceSeed(dir: string, seed: number, opts: ShrinkOptions & { scenario?: string } = {}): Promise<SandboxedShrink> {
  const ws = await resolveWorkspace(dir);
  return shrinkSeed(ws.system, ws.info.dir, opts.scenario ?? ws.bug.manifest.reproducer.scenario, seed, opts);
}

export interface WorkspaceReplayOptions {
  seed: number;
  scenario?: string;
  /** The events file to write (default: .ddbench/runs/replay-seed-<seed>/events.jsonl in the workspace). */
  out?: string;
  /** Replay a shrunk schedule: only these draws keep their seeded value. */
  keep?: readonly number[];
  sim?: SimOptionsInput;
  /** Shrink the failing schedule first, then replay the shrunk one. */
  shrink?: boolean;
  shrinkOptions?: ShrinkOptions;
}

export interface WorkspaceReplayResult extends SandboxedReplay {
  bugId: string;
  scenario: string;
  seed: number;
  /** schedule.json beside the events: `ddbench replay --schedule` replays it exactly. */
  scheduleFile: string;
  shrunk?: SandboxedShrink;
}

/** Replays one seed of the workspace's reproducer and writes its events under the workspace's runs. */
export async function replayWorkspaceSeed(dir: string, opts: WorkspaceReplayOptions): Promise<WorkspaceReplayResult> {
  const ws = await resolveWorkspace(dir);
  const scenario = opts.scenario ?? ws.bug.manifest.reproducer.scenario;
  const shrunk = opts.shrink ? await shrinkSeed(ws.system, ws.info.dir, scenario, opts.seed, { ...opts.shrinkOptions, sim: opts.sim }) : undefined;
  const keep = shrunk?.keep ?? opts.keep;
  const name = `replay-seed-${opts.seed}${keep ? '-shrunk' : ''}`;
  const eventsFile = path.resolve(opts.out ?? path.join(runsDir(ws.info.dir), name, 'events.jsonl'));
  const replay = await replaySeed(ws.system, ws.info.dir, scenario, opts.seed, { eventsFile, sim: opts.sim, ...(keep && { keep }) });
  const schedule: ScheduleFile = { scenario, seed: opts.seed, ...(keep && { keep: [...keep] }), ...(opts.sim && { sim: opts.sim }) };
  const scheduleFile = path.join(path.dirname(eventsFile), 'schedule.json');
  fs.writeFileSync(scheduleFile, JSON.stringify(schedule, null, 2) + '\n');
  return { bugId: ws.bug.id, scenario, seed: opts.seed, scheduleFile, ...replay, ...(shrunk && { shrunk }) };
}
