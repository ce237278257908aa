import * as os from 'node:os';
import * as path from 'node:path';
import type { SystemEntry } from '../bugs/catalog';
import type { BackendOptions } from '../cluster/backend';
import { DEFAULT_SEED } from '../bugs/runs';
import { runTrial } from './trial';
import { classify, type TrialResult } from '../scenario/verdict';
import { BuildFailed, buildUpstream } from '../cluster/upstream/build';
import { inPool } from '../pool';


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
  const spec = system.manifest.upstream;
  if (spec !== undefined) {
    // Built once for every trial (each finds it cached); code that does not build fails every trial with the compiler's message, unrun.
    try {
      await buildUpstream(system.id, spec, path.join(sourceDir, 'src'), { signal: opts.signal });
    } catch (err) {
      if (!(err instanceof BuildFailed)) throw err;
      const trials = Array.from({ length: total }, (_, index): TrialResult => ({ index, scenario, seed: seed + index, eventsFile: '', ...classify(err), durationMs: 0 }));
      return { scenario, trials, passed: 0, failed: total };
    }
  }
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
  return { scenario, trials: results, passed: results.filter((r) => r.verdict === 'pass').length, failed: results.filter((r) => r.verdict !== 'pass').length };
}
