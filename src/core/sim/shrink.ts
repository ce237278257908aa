import type { Decision } from './decisions';
import type { SimOptionsInput } from './options';
import { runSimTrial, type SimTrialResult } from './sim-trial';
import type { SimTarget } from './target';

export interface ShrinkOptions {
  /** Most runs to spend; past it the best schedule so far is returned (not proven minimal). */
  maxRuns?: number;
  sim?: SimOptionsInput;
  onRun?: (runs: number, kept: number) => void;
  signal?: AbortSignal;
}

/** A run's size, to show how much shrinking simplified it. */
export interface RunSize {
  /** Scheduler draws whose value differs from its fallback. */
  nonDefault: number;
  decisions: number;
  events: number;
  virtualMs: number;
}

/** A failing schedule: the seed, and the few draws that must keep their seeded value for the failure to happen. */
export interface ShrunkSchedule {
  seed: number;
  /** Indexes of the draws that keep their seeded value; every other draw takes its fallback. */
  keep: number[];
  /** Those draws, as the shrunk run made them. */
  kept: Decision[];
  /** The failure both runs share: verdict and violated check (or reason). */
  failure: string;
  result: SimTrialResult;
  original: RunSize;
  shrunk: RunSize;
  runs: number;
  /** Every kept draw was shown necessary: with any one of them at its fallback the failure goes away. */
  minimal: boolean;
}

export const DEFAULT_SHRINK_RUNS = 300;

/** What a failure is, for "still fails the same way": the verdict and the violated check (or reason). */
export function failureSignature(r: SimTrialResult): string {
  return `${r.verdict}: ${r.violation?.check ?? r.reason ?? ''}`;
}

function sizeOf(result: SimTrialResult, decisions: readonly Decision[]): RunSize {
  return { nonDefault: decisions.filter((d) => d.value !== d.fallback).length, decisions: result.decisions, events: result.events, virtualMs: result.virtualMs };
}

class RunBudgetSpent extends Error {}

/**
 * Shrinks a failing seed's schedule by delta debugging (Zeller's ddmin) over its
 * non-default draws: it looks for the smallest set of draws that must keep their
 * seeded value — every other delay at its minimum, every other fault at its likelier
 * outcome — for the run to fail the same way. Node randomness and the scenario's own
 * choices stay as the seed makes them.
 */
export async function shrinkFailure(target: SimTarget, seed: number, opts: ShrinkOptions = {}): Promise<ShrunkSchedule> {
  const maxRuns = opts.maxRuns ?? DEFAULT_SHRINK_RUNS;
  const first = await runSimTrial(target, { seed, sim: opts.sim, record: true });
  if (first.result.verdict === 'pass') throw new Error(`seed ${seed} passes ${target.scenario.name}; there is no failure to shrink`);
  const failure = failureSignature(first.result);
  const recorded = first.cluster.decisionLog();
  const candidates = recorded.filter((d) => d.value !== d.fallback).map((d) => d.index);

  let runs = 1;
  const verdicts = new Map<string, boolean>();
  const fails = async (keep: readonly number[]): Promise<boolean> => {
    const key = keep.join(',');
    const known = verdicts.get(key);
    if (known !== undefined) return known;
    if (runs >= maxRuns || opts.signal?.aborted) throw new RunBudgetSpent();
    runs++;
    const { result } = await runSimTrial(target, { seed, sim: opts.sim, keep: new Set(keep) });
    const same = result.verdict !== 'pass' && failureSignature(result) === failure;
    verdicts.set(key, same);
    opts.onRun?.(runs, keep.length);
    return same;
  };

  let best: readonly number[] = candidates;
  let minimal = false;
  try {
    best = await ddmin(candidates, fails, (c) => (best = c));
    minimal = true;
  } catch (err) {
    if (!(err instanceof RunBudgetSpent)) throw err;
  }
  const final = await runSimTrial(target, { seed, sim: opts.sim, keep: new Set(best), record: true });
  const keepSet = new Set(best);
  return {
    seed,
    keep: [...best],
    kept: final.cluster.decisionLog().filter((d) => keepSet.has(d.index)),
    failure,
    result: final.result,
    original: sizeOf(first.result, recorded),
    shrunk: sizeOf(final.result, final.cluster.decisionLog()),
    runs: runs + 1,
    minimal,
  };
}

/**
 * ddmin: the smallest subset of `items` for which `fails` holds, 1-minimal (removing
 * any single item makes it pass). `progress` sees every smaller failing subset found,
 * so a caller whose budget runs out keeps the best one.
 */
async function ddmin(items: readonly number[], fails: (subset: readonly number[]) => Promise<boolean>, progress: (subset: readonly number[]) => void): Promise<readonly number[]> {
  if (items.length === 0 || (await fails([]))) {
    progress([]);
    return [];
  }
  let current = items;
  let n = 2;
  while (current.length >= 2) {
    const chunks = split(current, n);
    let reduced = false;
    for (const chunk of chunks) {
      if (await fails(chunk)) {
        current = chunk;
        n = 2;
        reduced = true;
        break;
      }
    }
    if (!reduced) {
      for (let i = 0; i < chunks.length && n > 2; i++) {
        const complement = chunks.filter((_, j) => j !== i).flat();
        if (await fails(complement)) {
          current = complement;
          n = Math.max(n - 1, 2);
          reduced = true;
          break;
        }
      }
    }
    if (reduced) {
      progress(current);
      continue;
    }
    if (n >= current.length) break;
    n = Math.min(current.length, 2 * n);
  }
  return current;
}

function split(items: readonly number[], n: number): number[][] {
  const chunks: number[][] = [];
  let start = 0;
  for (let i = 0; i < n; i++) {
    const end = start + Math.floor((items.length - start) / (n - i));
    chunks.push(items.slice(start, end));
    start = end;
  }
  return chunks.filter((c) => c.length > 0);
}
