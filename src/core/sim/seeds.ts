import { performance } from 'node:perf_hooks';
import type { SystemEntry } from '../bugs/catalog';
import { DEFAULT_SEED, type Verdict } from '../repro/trial';
import { eventsDigest } from './events-file';
import type { SimOptionsInput } from './options';
import { runSimTrial, type SimTrialResult } from './sim-trial';
import { prepareTarget, type SimTarget } from './target';

export interface SeedSearchOptions {
  /** How many seeds to run. */
  seeds: number;
  /** The first seed; seed i of the search is from + i. */
  from?: number;
  stopAtFirstFailure?: boolean;
  sim?: SimOptionsInput;
  /** Runs every seed twice and compares the two event streams byte for byte. */
  checkDeterminism?: boolean;
  onSeed?: (r: SimTrialResult, done: number, total: number) => void;
  signal?: AbortSignal;
}

export interface SeedSearchResult {
  scenario: string;
  from: number;
  seedsRun: number;
  /** Seeds whose verdict was not pass, in order. */
  failedSeeds: number[];
  firstFailingSeed?: number;
  firstFailure?: SimTrialResult;
  verdicts: Record<Verdict, number>;
  /** Failed seeds over seeds run. */
  failureRate: number;
  seedsPerSecond: number;
  elapsedMs: number;
  /** Seeds whose two runs differed (with checkDeterminism): the system or scenario depends on something outside the seed. */
  nondeterministicSeeds: number[];
}

/** Runs many seeds of a scenario in simulation against the code in `sourceDir`. */
export async function simulateSeeds(system: SystemEntry, sourceDir: string, scenario: string, opts: SeedSearchOptions): Promise<SeedSearchResult> {
  return searchSeeds(await prepareTarget(system, sourceDir, scenario), opts);
}

export async function searchSeeds(target: SimTarget, opts: SeedSearchOptions): Promise<SeedSearchResult> {
  const from = opts.from ?? DEFAULT_SEED;
  const started = performance.now();
  const verdicts: Record<Verdict, number> = { pass: 0, fail: 0, error: 0, timeout: 0 };
  const failedSeeds: number[] = [];
  const nondeterministicSeeds: number[] = [];
  let firstFailure: SimTrialResult | undefined;
  let seedsRun = 0;
  for (let i = 0; i < opts.seeds && !opts.signal?.aborted; i++) {
    const seed = from + i;
    const run = await runSimTrial(target, { seed, sim: opts.sim });
    if (opts.checkDeterminism) {
      const again = await runSimTrial(target, { seed, sim: opts.sim });
      if (eventsDigest(again.cluster.events()) !== eventsDigest(run.cluster.events())) nondeterministicSeeds.push(seed);
    }
    const r = run.result;
    seedsRun++;
    verdicts[r.verdict]++;
    if (r.verdict !== 'pass') {
      failedSeeds.push(seed);
      firstFailure ??= r;
    }
    opts.onSeed?.(r, seedsRun, opts.seeds);
    if (opts.stopAtFirstFailure && r.verdict !== 'pass') break;
  }
  const elapsedMs = performance.now() - started;
  return {
    scenario: target.scenario.name,
    from,
    seedsRun,
    failedSeeds,
    ...(firstFailure && { firstFailingSeed: firstFailure.seed, firstFailure }),
    verdicts,
    failureRate: seedsRun === 0 ? 0 : failedSeeds.length / seedsRun,
    seedsPerSecond: elapsedMs > 0 ? (seedsRun * 1000) / elapsedMs : 0,
    elapsedMs,
    nondeterministicSeeds,
  };
}
