/** Runs on disk: which trials a workspace has, and loading one (or any event files) as a timeline run. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { UserError } from '../errors';
import { DDBENCH_DIR } from '../paths';
import { loadTimeline, resolveInputs, type LoadOptions } from '../events/load';
import { trialTitle } from '../verify/format';
import type { RunSource } from './model';
import { MAX_RUNS } from './protocol';

/** The part of trial.json (core/repro/trial.ts) a picker and a label need. */
const TrialFile = z.looseObject({
  index: z.number(),
  scenario: z.string(),
  seed: z.number(),
  verdict: z.string(),
  reason: z.string().optional(),
});

export interface TrialEntry {
  /** The trial's folder (events.jsonl, router.jsonl, trial.json). */
  dir: string;
  /** The reproducer run it belongs to (its folder name: a sortable time stamp). */
  run: string;
  scenario: string;
  index: number;
  seed: number;
  verdict: string;
  reason?: string;
}

/** Every trial under `<workspace>/.ddbench/runs`, newest run first; unreadable trial.json files are skipped. */
export function listTrials(workspace: string): TrialEntry[] {
  const runsDir = path.join(workspace, DDBENCH_DIR, 'runs');
  if (!fs.existsSync(runsDir)) return [];
  const out: TrialEntry[] = [];
  for (const run of fs.readdirSync(runsDir).sort().reverse()) {
    const runDir = path.join(runsDir, run);
    if (!fs.statSync(runDir).isDirectory()) continue;
    for (const trial of fs.readdirSync(runDir).sort()) {
      const dir = path.join(runDir, trial);
      const t = readTrial(dir);
      if (t !== undefined) out.push({ dir, run, scenario: t.scenario, index: t.index, seed: t.seed, verdict: t.verdict, ...(t.reason !== undefined && { reason: t.reason }) });
    }
  }
  return out;
}

function readTrial(dir: string): z.infer<typeof TrialFile> | undefined {
  try {
    const parsed = TrialFile.safeParse(JSON.parse(fs.readFileSync(path.join(dir, 'trial.json'), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** "lock-waiter-lease-expiry trial 1 · seed 1 · fail: invariant violated: …" for a trial folder, else the file names. */
export function runLabel(files: readonly string[]): string {
  const dir = path.dirname(files[0] ?? '.');
  const t = readTrial(dir);
  if (t !== undefined) return trialTitle(t);
  return files.map((f) => path.basename(f)).join(' + ');
}

/**
 * Loads what `inputs` stand for (a workspace's latest run, a run folder, files) as
 * one timeline run. Its `inputs` become the resolved files, so reopening it later
 * shows this run, not whatever is newest by then.
 */
export async function loadRun(inputs: readonly string[], opts: LoadOptions = {}): Promise<RunSource> {
  const files = resolveInputs(inputs).map((i) => i.file);
  const store = await loadTimeline(files, opts);
  return { store, label: runLabel(files), inputs: files };
}

/**
 * Executions of one multi-execution log as runs, to show side by side as ShiViz does
 * (each host's lanes one above the other, A, B, C, …; with two, their first divergence
 * marked as in a comparison of runs), each labelled with its execution.
 */
export async function loadExecutions(inputs: readonly string[], opts: LoadOptions, executions: readonly (string | number)[]): Promise<RunSource[]> {
  if (executions.length === 0 || executions.length > MAX_RUNS) throw new UserError(`show 1 to ${MAX_RUNS} executions side by side; ${executions.length} were asked for`);
  const runs: RunSource[] = [];
  for (const execution of executions) {
    const run = await loadRun(inputs, { ...opts, execution });
    const label = run.store.sources.flatMap((s) => s.executions ?? [])[typeof execution === 'number' ? execution - 1 : -1] ?? String(execution);
    runs.push({ ...run, label: executions.length > 1 ? `${run.label} · ${label}` : run.label });
  }
  return runs;
}
