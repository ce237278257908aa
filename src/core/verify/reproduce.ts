import * as path from 'node:path';
import { newRunId, runsDir } from '../bugs/runs';
import { resolveWorkspace } from '../bugs/workspace';
import { runScenarioTrials, type TrialsOptions, type TrialsResult } from '../repro/trials';
import { MIN_SIM_SEEDS, simulate, type SimCheckOptions, type SimSummary } from './simulate';

export interface ReproResult extends TrialsResult {
  bugId: string;
  runDir: string;
  /** The reproducer's simulated seeds on the same code (unless turned off). */
  sim?: SimSummary;
}

/** Runs the bug's reproducer against the workspace's current code: live trials, then simulated seeds. */
export async function runReproducer(dir: string, opts: Partial<TrialsOptions> & SimCheckOptions = {}): Promise<ReproResult> {
  const ws = await resolveWorkspace(dir);
  const runDir = path.join(runsDir(ws.info.dir), `repro-${newRunId()}`);
  const trials = opts.trials ?? ws.bug.manifest.reproducer.trials;
  const scenario = ws.bug.manifest.reproducer.scenario;
  const r = await runScenarioTrials(ws.system, ws.info.dir, scenario, runDir, { ...opts, trials });
  if (opts.sim === false || opts.signal?.aborted) return { bugId: ws.bug.id, runDir, ...r };
  const sim = await simulate(ws.system, ws.info.dir, scenario, {
    seeds: opts.simSeeds ?? MIN_SIM_SEEDS,
    from: opts.seed,
    concurrency: opts.concurrency,
    signal: opts.signal,
    onSeed: (t, done, total) => opts.onSimSeed?.('code', t, done, total),
  });
  return { bugId: ws.bug.id, runDir, ...r, sim };
}
