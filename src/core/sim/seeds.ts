import { performance } from 'node:perf_hooks';
import { DEFAULT_SEED } from '../bugs/runs';
import { eventsDigest } from './events-file';
import { tally, type SeedSearchOptions, type SeedSearchResult } from './search';
import { runSimTrial, type SimTrialResult } from './sim-trial';
import type { SimTarget } from './target';

/**
 * Runs the seeds in this thread, one after another, with no sandbox and no budget: for
 * code the harness trusts (its own tests and benchmarks). Submitted code goes through
 * sandboxed.ts.
 */
export async function searchSeeds(target: SimTarget, opts: SeedSearchOptions): Promise<SeedSearchResult> {
  const from = opts.from ?? DEFAULT_SEED;
  const started = performance.now();
  const results: SimTrialResult[] = [];
  const nondeterministic: number[] = [];
  for (let i = 0; i < opts.seeds && !opts.signal?.aborted; i++) {
    const seed = from + i;
    // A seed runs on promises alone; between seeds the thread's timers and sockets get a turn, so a live cluster in this process (the editor's, a test's) is not starved.
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const run = await runSimTrial(target, { seed, sim: opts.sim });
    if (opts.checkDeterminism) {
      const again = await runSimTrial(target, { seed, sim: opts.sim });
      if (eventsDigest(again.cluster.events()) !== eventsDigest(run.cluster.events())) nondeterministic.push(seed);
    }
    results.push(run.result);
    opts.onSeed?.(run.result, results.length, opts.seeds);
    if (opts.stopAtFirstFailure && run.result.verdict !== 'pass') break;
  }
  return { ...tally(target.scenario.name, from, results, nondeterministic, performance.now() - started), isolation: 'none' };
}

