import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { scenarioFile, type SystemEntry } from '../bugs/catalog';
import type { Verdict } from '../scenario/verdict';
import type { SimTrialResult } from '../sim/sim-trial';
import type { Isolation } from '../sandbox/levels';
import { simulateSeeds } from '../sim/sandboxed';
import type { SeedSearchOptions, SeedSearchResult } from '../sim/search';
import { snapshotSource } from '../sim/snapshot-cache';

/**
 * How many seeds verification runs. A fix that survives N seeds of a bug that fails
 * a fraction p of them leaves (1 - p)^N chance that it fixed nothing; N >= ln(α) / ln(1 - p)
 * bounds that by α (docs/simulation.md, "How many seeds a fix needs").
 */
export const SIM_ALPHA = 0.05;
/** Seeds for a reproducer run, and the least any verification runs: enough to see a rare failure now and then. */
export const MIN_SIM_SEEDS = 100;
/** Seeds of the buggy code that measure its failure rate before a fix is verified. */
export const MEASURE_SIM_SEEDS = 100;
/** A bug of the set is valid only if its fix passes at least this many seeds. */
export const VALIDATE_FIX_SEEDS = 1000;
/** Seeds of the buggy code that measure its failure rate when validating the set. */
export const VALIDATE_BUGGY_SEEDS = 200;

/** The seeds that give confidence 1 - α that a fix passing all of them is real, for failure rate p; at least `floor`. */
export function seedsForConfidence(p: number, floor: number, alpha = SIM_ALPHA): number {
  if (!(p > 0)) return floor;
  if (p >= 1) return Math.max(floor, 1);
  return Math.max(floor, Math.ceil(Math.log(alpha) / Math.log(1 - p)));
}

/** What a report shows of a seed search. */
export interface SimSummary {
  scenario: string;
  /** Seeds run (from, from + 1, ...). */
  seeds: number;
  from: number;
  failed: number;
  failureRate: number;
  verdicts: Record<Verdict, number>;
  /** The first failing seeds, at most MAX_LISTED_SEEDS of them. */
  failedSeeds: number[];
  firstFailingSeed?: number;
  firstFailure?: Pick<SimTrialResult, 'verdict' | 'reason' | 'violation' | 'virtualMs'>;
  seedsPerSecond: number;
  /** How the simulated code was kept from the machine (sandbox/isolation.ts). */
  isolation: Isolation;
}

const MAX_LISTED_SEEDS = 20;

export function summarize(r: SeedSearchResult): SimSummary {
  const f = r.firstFailure;
  return {
    scenario: r.scenario,
    seeds: r.seedsRun,
    from: r.from,
    failed: r.failedSeeds.length,
    failureRate: r.failureRate,
    verdicts: r.verdicts,
    failedSeeds: r.failedSeeds.slice(0, MAX_LISTED_SEEDS),
    ...(f && {
      firstFailingSeed: f.seed,
      firstFailure: { verdict: f.verdict, virtualMs: f.virtualMs, ...(f.reason !== undefined && { reason: f.reason }), ...(f.violation && { violation: f.violation }) },
    }),
    seedsPerSecond: r.seedsPerSecond,
    isolation: r.isolation,
  };
}

/** Runs a scenario's seeds in simulation on the code in `codeDir` and summarises them. */
export async function simulate(system: SystemEntry, codeDir: string, scenario: string, opts: SeedSearchOptions): Promise<SimSummary> {
  return summarize(await simulateSeeds(system, codeDir, scenario, opts));
}

/** The simulated half of verifying a fix. */
export interface SimVerification {
  /** The buggy code's failure rate, measured first. */
  buggy: SimSummary;
  /** Seeds the fix had to pass: from the measured rate, or as asked. */
  required: number;
  fixed: SimSummary;
  /** The fix passed every required seed. */
  passed: boolean;
}

export interface SimVerifyOptions {
  /** Seeds the fix must pass; by default from the buggy code's measured failure rate. */
  seeds?: number;
  from?: number;
  /** Seeds that measure the buggy code's failure rate. */
  measureSeeds?: number;
  /** The least seeds the fix must pass when the count comes from the failure rate. */
  floor?: number;
  onSeed?: (phase: 'buggy' | 'fixed', r: SimTrialResult, done: number, total: number) => void;
  /** Worker threads at once (default: one per core). */
  concurrency?: number;
  signal?: AbortSignal;
}

/**
 * Failure rates of buggy code already measured in this process, by code (its snapshot
 * is named by its content), scenario and seeds. A run is a function of these, so an
 * agent verifying fix after fix measures its bug once.
 */
const measured = new Map<string, SimSummary>();

async function measureBuggy(system: SystemEntry, buggyDir: string, scenario: string, opts: SimVerifyOptions): Promise<SimSummary> {
  const seeds = opts.measureSeeds ?? MEASURE_SIM_SEEDS;
  const scenarioText = fs.readFileSync(scenarioFile(system, scenario));
  const key = JSON.stringify([snapshotSource(buggyDir), createHash('sha256').update(scenarioText).digest('hex'), opts.from ?? null, seeds]);
  const known = measured.get(key);
  if (known !== undefined) return known;
  const summary = await simulate(system, buggyDir, scenario, {
    seeds,
    from: opts.from,
    concurrency: opts.concurrency,
    signal: opts.signal,
    onSeed: (r, d, n) => opts.onSeed?.('buggy', r, d, n),
  });
  if (summary.seeds === seeds) measured.set(key, summary);
  return summary;
}

/** Measures the bug's failure rate over seeds on the buggy code, then requires the fix to pass every seed of the number that rate calls for. */
export async function verifyInSimulation(system: SystemEntry, scenario: string, buggyDir: string, fixedDir: string, opts: SimVerifyOptions = {}): Promise<SimVerification> {
  const from = opts.from;
  const buggy = await measureBuggy(system, buggyDir, scenario, opts);
  const required = opts.seeds ?? seedsForConfidence(buggy.failureRate, opts.floor ?? MIN_SIM_SEEDS);
  const fixed = await simulate(system, fixedDir, scenario, {
    seeds: required,
    from,
    stopAtFirstFailure: true,
    concurrency: opts.concurrency,
    signal: opts.signal,
    onSeed: (r, d, n) => opts.onSeed?.('fixed', r, d, n),
  });
  return { buggy, required, fixed, passed: fixed.failed === 0 && fixed.seeds === required };
}

/** The simulated seeds a reproducer, verify or validate run adds to its live trials. */
export interface SimCheckOptions {
  /** Run simulated seeds as well as live trials (default true). */
  sim?: boolean;
  /** Seeds to simulate instead of the default (reproducer) or the count from the failure rate (verify, validate). */
  simSeeds?: number;
  /** Seeds of the buggy code that measure its failure rate (default: MEASURE_SIM_SEEDS for verify, VALIDATE_BUGGY_SEEDS for validate). */
  simBuggySeeds?: number;
  onSimSeed?: (phase: 'code' | 'buggy' | 'fixed', r: SimTrialResult, done: number, total: number) => void;
}
