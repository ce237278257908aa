import * as path from 'node:path';
import { newRunId, runsDir } from '../bugs/runs';
import { resolveWorkspace } from '../bugs/workspace';
import { runScenarioTrials, type TrialsOptions, type TrialsResult } from '../repro/trials';
import { buggyCodeChecks } from './baseline';
import { failedChecks, movedChecks, type FailedCheck } from './checks';
import { MIN_SIM_SEEDS, simulate, type SimCheckOptions, type SimSummary } from './simulate';
import { workspaceDiff } from './verify';

export interface ReproResult extends TrialsResult {
  bugId: string;
  runDir: string;
  /** The reproducer's simulated seeds on the same code (unless turned off). */
  sim?: SimSummary;
  /** Each check that failed, once, with where it first failed. */
  failing: FailedCheck[];
  /** On changed code: the failing checks that the bug's own code never fails (the change moved the failure). */
  moved: FailedCheck[];
}

/** Runs the bug's reproducer against the workspace's current code: live trials, then simulated seeds. */
export async function runReproducer(dir: string, opts: Partial<TrialsOptions> & SimCheckOptions = {}): Promise<ReproResult> {
  const ws = await resolveWorkspace(dir);
  const runDir = path.join(runsDir(ws.info.dir), `repro-${newRunId()}`);
  const trials = opts.trials ?? ws.bug.manifest.reproducer.trials;
  const scenario = ws.bug.manifest.reproducer.scenario;
  const r = await runScenarioTrials(ws.system, ws.info.dir, scenario, runDir, { ...opts, trials });
  const sim =
    opts.sim === false || ws.system.manifest.upstream !== undefined || opts.signal?.aborted
      ? undefined
      : await simulate(ws.system, ws.info.dir, scenario, {
          seeds: opts.simSeeds ?? MIN_SIM_SEEDS,
          from: opts.seed,
          concurrency: opts.concurrency,
          signal: opts.signal,
          onSeed: (t, done, total) => opts.onSimSeed?.('code', t, done, total),
        });
  const failing = failedChecks([r], sim ? [sim] : []);
  // Only changed code can move the failure; the bug's own checks are measured once and kept.
  const changed = failing.length > 0 && !opts.signal?.aborted && (await workspaceDiff(ws.info.dir, ws.catalog)).trim() !== '';
  const moved = changed ? movedChecks(failing, await buggyCodeChecks(ws, opts.signal)) : [];
  return { bugId: ws.bug.id, runDir, ...r, ...(sim && { sim }), failing, moved };
}
