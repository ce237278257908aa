import * as os from 'node:os';
import * as path from 'node:path';
import type { SystemEntry } from '../bugs/catalog';
import type { BackendOptions } from '../cluster';
import { MIN_SIM_SEEDS, simulate, type SimCheckOptions, type SimSummary } from '../sim/verification';
import { resolveWorkspace, runsDir } from './launch';
import { newRunId } from './runid';
import { DEFAULT_SEED, runTrial, type TrialResult } from './trial';
import { inPool } from '../pool';

export type { TrialResult, Verdict } from './trial';

export interface TrialsOptions {
  trials: number;
  /** Seed of the first trial; trial i uses seed + i. */
  seed?: number;
  /** Trials run at once, each on its own cluster and ports. Defaults to the core count. */
  concurrency?: number;
  onTrial?: (t: TrialResult, done: number, total: number) => void;
  signal?: AbortSignal;
  /** Keep each node's state at the end of every trial (state.json in the trial's folder). */
  captureState?: boolean;
  /** Where the nodes run (default: processes). */
  backend?: BackendOptions;
}

export interface TrialsResult {
  scenario: string;
  trials: TrialResult[];
  passed: number;
  failed: number;
}

/** Runs seeded trials of one scenario against `sourceDir`, in parallel, each under `runDir/<scenario>-<i>`. */
export async function runScenarioTrials(
  system: SystemEntry,
  sourceDir: string,
  scenario: string,
  runDir: string,
  opts: TrialsOptions,
): Promise<TrialsResult> {
  const seed = opts.seed ?? DEFAULT_SEED;
  const total = opts.trials;
  let done = 0;
  const indices = Array.from({ length: total }, (_, i) => i);
  const results = await inPool(
    indices,
    opts.concurrency ?? os.cpus().length,
    async (index) => {
      const r = await runTrial({
        index,
        system,
        sourceDir,
        scenario,
        seed: seed + index,
        runDir: path.join(runDir, `${scenario}-${index}`),
        signal: opts.signal,
        captureState: opts.captureState,
        backend: opts.backend,
      });
      opts.onTrial?.(r, ++done, total);
      return r;
    },
    opts.signal,
  );
  const ran = results.filter((r) => r !== undefined);
  return { scenario, trials: ran, passed: ran.filter((r) => r.verdict === 'pass').length, failed: ran.filter((r) => r.verdict !== 'pass').length };
}

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
