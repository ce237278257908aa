import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { scenarioFile, type SystemEntry } from '../bugs/catalog';
import { DEFAULT_SEED } from '../bugs/runs';
import { eventsDigest } from './events-file';
import { searchSeedsInWorkers, workerScript } from './pool';
import { tally, type SeedSearchOptions, type SeedSearchResult } from './search';
import { runSimTrial, type SimTrialResult } from './sim-trial';
import { prepareTarget, snapshotSource, type SimTarget } from './target';

/** A worker costs a module load; below this many seeds each, one thread is faster. */
const SEEDS_PER_WORKER = 10;

function defaultConcurrency(seeds: number): number {
  return Math.max(1, Math.min(os.availableParallelism(), Math.floor(seeds / SEEDS_PER_WORKER)));
}

/**
 * Runs many seeds of a scenario in simulation against the code in `sourceDir`: in
 * worker threads when there are seeds enough and a worker script (the CLI bundle, or
 * the sources under tsx), else in this thread. Either way the result is the same.
 */
export async function simulateSeeds(system: SystemEntry, sourceDir: string, scenario: string, opts: SeedSearchOptions): Promise<SeedSearchResult> {
  const concurrency = opts.concurrency ?? defaultConcurrency(opts.seeds);
  const script = concurrency > 1 ? workerScript() : undefined;
  if (script === undefined) return searchSeeds(await prepareTarget(system, sourceDir, scenario), opts);
  // Snapshot once here, so the workers find it made instead of each copying the tree.
  snapshotSource(sourceDir);
  return searchSeedsInWorkers({ system, sourceDir, scenarioPath: scenarioFile(system, scenario) }, opts, concurrency, script);
}

/** Runs the seeds in this thread, one after another. */
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
  return tally(target.scenario.name, from, results, nondeterministic, performance.now() - started);
}

export type { SeedSearchOptions, SeedSearchResult } from './search';
