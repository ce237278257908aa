// What the editor's "Run Simulated Seeds" shows: a seed search over the workspace's
// reproducer, with each failing seed's verdict and reason (the search itself keeps only
// the seed numbers), and how to ask for one ("200", "200 from 5000").
import type { Verdict } from '../scenario/verdict';
import { DEFAULT_SEED } from '../bugs/runs';
import type { SimTrialResult } from './sim-trial';
import { simulateWorkspace, type WorkspaceSimOptions } from './workspace';

/** Seeds an editor run asks for when the user gives no number (the CLI's default too). */
export const DEFAULT_SEED_COUNT = 100;
/** A bound that keeps a typo ("20000000") from tying up the machine for an hour. */
export const MAX_SEED_COUNT = 1_000_000;

export interface SeedRequest {
  seeds: number;
  /** The first seed; seed i of the run is from + i. */
  from: number;
}

/**
 * Reads "N" or "N from S" (also "N @ S", "N S"); empty means the defaults. Gives the
 * request, or a message saying what is wrong with the text.
 */
export function parseSeedRequest(text: string, defaults: Partial<SeedRequest> = {}): SeedRequest | { error: string } {
  const t = text.trim();
  const seeds = defaults.seeds ?? DEFAULT_SEED_COUNT;
  const from = defaults.from ?? DEFAULT_SEED;
  if (t === '') return { seeds, from };
  const m = /^(\d+)(?:\s*(?:\s|from|@)\s*(\d+))?$/i.exec(t);
  if (!m) return { error: 'type a number of seeds, optionally followed by "from" and the first seed: 200, or 200 from 5000' };
  const n = Number(m[1]);
  if (!Number.isSafeInteger(n) || n < 1) return { error: 'run at least one seed' };
  if (n > MAX_SEED_COUNT) return { error: `at most ${MAX_SEED_COUNT.toLocaleString('en-US')} seeds in one run` };
  const first = m[2] === undefined ? from : Number(m[2]);
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(first + n)) return { error: 'the first seed is out of range' };
  return { seeds: n, from: first };
}

/** The request as the user would type it again. */
export function formatSeedRequest(r: SeedRequest): string {
  return r.from === DEFAULT_SEED ? String(r.seeds) : `${r.seeds} from ${r.from}`;
}

export interface SeedFailure {
  seed: number;
  verdict: Exclude<Verdict, 'pass'>;
  /** Why it did not pass, in one line. */
  reason?: string;
  /** Virtual ms from the start of the run to its verdict. */
  virtualMs: number;
}

export interface SeedRunReport {
  bugId: string;
  dir: string;
  scenario: string;
  from: number;
  /** Seeds asked for. */
  requested: number;
  seedsRun: number;
  /** Every seed that did not pass, in seed order. */
  failures: SeedFailure[];
  verdicts: Record<Verdict, number>;
  failureRate: number;
  seedsPerSecond: number;
  elapsedMs: number;
  /** Stopped by the signal before every seed ran. */
  cancelled: boolean;
  /** When the run ended (ISO 8601). */
  endedAt: string;
}

export interface SeedRunOptions extends SeedRequest {
  scenario?: string;
  signal?: AbortSignal;
  concurrency?: number;
  /** After each seed: how many have run and how many of those failed, and the seed's result. */
  onSeed?: (progress: { done: number; total: number; failed: number }, result: SimTrialResult) => void;
}

/** Runs the workspace's reproducer (or another scenario) over seeds from..from+seeds-1 in simulation. */
export async function runSeedReport(dir: string, opts: SeedRunOptions): Promise<SeedRunReport> {
  const failed = new Map<number, SimTrialResult>();
  const search: WorkspaceSimOptions = {
    seeds: opts.seeds,
    from: opts.from,
    scenario: opts.scenario,
    signal: opts.signal,
    concurrency: opts.concurrency,
    onSeed: (r, done, total) => {
      if (r.verdict !== 'pass') failed.set(r.seed, r);
      opts.onSeed?.({ done, total, failed: failed.size }, r);
    },
  };
  const r = await simulateWorkspace(dir, search);
  return {
    bugId: r.bugId,
    dir: r.dir,
    scenario: r.scenario,
    from: r.from,
    requested: opts.seeds,
    seedsRun: r.seedsRun,
    failures: r.failedSeeds.map((seed) => toFailure(seed, failed.get(seed))),
    verdicts: r.verdicts,
    failureRate: r.failureRate,
    seedsPerSecond: r.seedsPerSecond,
    elapsedMs: r.elapsedMs,
    cancelled: r.seedsRun < opts.seeds && opts.signal?.aborted === true,
    endedAt: new Date().toISOString(),
  };
}

function toFailure(seed: number, r: SimTrialResult | undefined): SeedFailure {
  const verdict = r === undefined || r.verdict === 'pass' ? 'fail' : r.verdict;
  return { seed, verdict, ...(r?.reason !== undefined && { reason: r.reason }), virtualMs: r?.virtualMs ?? 0 };
}

/** "20 seeds (1..20): 3 failed (15.0%)" — with "cancelled after" when it was. */
export function describeSeedRun(r: SeedRunReport): string {
  const last = r.from + Math.max(r.seedsRun, 1) - 1;
  const range = r.seedsRun === 0 ? 'no seeds' : `${r.seedsRun} seed${r.seedsRun === 1 ? '' : 's'} (${r.from}..${last})`;
  const head = r.cancelled ? `cancelled after ${range} of ${r.requested}` : range;
  const outcome = r.failures.length === 0 ? (r.seedsRun === 0 ? '' : ': every seed passed') : `: ${r.failures.length} failed (${(r.failureRate * 100).toFixed(1)}%)`;
  return head + outcome;
}
