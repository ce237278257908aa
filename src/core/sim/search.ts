import type { Isolation } from '../sandbox/levels';
import type { Verdict } from '../scenario/verdict';
import type { SeedLimits } from './limits';
import type { SimOptionsInput } from './options';
import type { SimTrialResult } from './sim-trial';

// What a seed search takes and gives, shared by the in-thread search (seeds.ts) and the worker pool (pool.ts).

export interface SeedSearchOptions {
  /** How many seeds to run. */
  seeds: number;
  /** The first seed; seed i of the search is from + i. */
  from?: number;
  stopAtFirstFailure?: boolean;
  sim?: SimOptionsInput;
  /** Runs every seed twice and compares the two event streams byte for byte. */
  checkDeterminism?: boolean;
  /** Worker threads running seeds at once; by default one per core once there are seeds enough to share. */
  concurrency?: number;
  /** Each seed's budgets (limits.ts); by default from the scenario's timeoutMs. */
  limits?: SeedLimits;
  /** Real ms the whole sandboxed search may take; by default every seed's budget, shared among the workers. */
  wallMs?: number;
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
  /** How the code under simulation was kept from the machine (sandbox/isolation.ts); none for a search in the harness's own thread. */
  isolation: Isolation;
}

/** The search's result from its runs, given in seed order. */
export function tally(scenario: string, from: number, results: readonly SimTrialResult[], nondeterministicSeeds: number[], elapsedMs: number): Omit<SeedSearchResult, 'isolation'> {
  const verdicts: Record<Verdict, number> = { pass: 0, fail: 0, error: 0, timeout: 0 };
  for (const r of results) verdicts[r.verdict]++;
  const failed = results.filter((r) => r.verdict !== 'pass');
  const firstFailure = failed[0];
  return {
    scenario,
    from,
    seedsRun: results.length,
    failedSeeds: failed.map((r) => r.seed),
    ...(firstFailure && { firstFailingSeed: firstFailure.seed, firstFailure }),
    verdicts,
    failureRate: results.length === 0 ? 0 : failed.length / results.length,
    seedsPerSecond: elapsedMs > 0 ? (results.length * 1000) / elapsedMs : 0,
    elapsedMs,
    nondeterministicSeeds,
  };
}
