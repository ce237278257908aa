import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { SystemManifest } from '../bugs/manifest';
import { DEFAULT_SEED } from '../bugs/runs';
import { UserError } from '../errors';
import { MIN_SEED_WALL_MS, seedHeapMb, seedWallMs, type SeedLimits } from './limits';
import { tally, type SeedSearchOptions, type SeedSearchResult } from './search';
import type { SimTrialResult } from './sim-trial';
import type { FromWorker, SimWorkerData, ToWorker } from './worker';

/** What each worker loads: plain data, since a worker has its own modules. */
export interface WorkerTarget {
  manifest: SystemManifest;
  /** A snapshot of the code (snapshot-cache.ts), which workers import as it is. */
  srcRoot: string;
  scenarioPath: string;
}

export interface PoolHooks {
  limits?: SeedLimits;
  /** Every seed's result as it comes, with whether its two runs differed (checkDeterminism). */
  onResult?: (r: SimTrialResult, nondeterministic: boolean) => void;
}

interface Slot {
  worker: Worker;
  /** The seed it runs now, and when its budget ends. */
  seed?: number;
  startedAt?: number;
  timer?: NodeJS.Timeout;
}

function overBudget(scenario: string, seed: number, reason: string, durationMs: number): SimTrialResult {
  return { scenario, seed, verdict: 'timeout', reason, virtualMs: 0, events: 0, steps: 0, decisions: 0, durationMs };
}

/**
 * Runs seeds in worker threads (`workerFile`, the simulation worker's bundle), handing
 * out the next seed to whichever worker is free. Each seed's run is independent of
 * every other, so the result is the one the sequential search gives: with
 * stopAtFirstFailure, seeds past the lowest failing one are not counted even if a
 * worker already ran them. A seed over its wall-time or heap budget (limits.ts) ends
 * with verdict timeout; its worker is replaced and the search goes on.
 */
export async function searchSeedsInWorkers(target: WorkerTarget, opts: SeedSearchOptions, concurrency: number, workerFile: string, hooks: PoolHooks = {}): Promise<Omit<SeedSearchResult, 'isolation'>> {
  const { limits } = hooks;
  const from = opts.from ?? DEFAULT_SEED;
  const end = from + opts.seeds;
  const started = performance.now();
  const results = new Map<number, SimTrialResult>();
  const nondeterministic = new Set<number>();
  let scenario = path.basename(target.scenarioPath, '.mjs');
  let wallMs = seedWallMs(0, limits);
  const heapMb = seedHeapMb(limits);
  let next = from;
  let lowestFailure = Infinity;
  const workerData: SimWorkerData = {
    kind: 'ddbench-sim-worker',
    manifest: target.manifest,
    srcRoot: target.srcRoot,
    scenarioPath: target.scenarioPath,
    checkDeterminism: opts.checkDeterminism === true,
    ...(opts.sim && { sim: opts.sim }),
  };
  const runs = opts.checkDeterminism === true ? 2 : 1;

  await new Promise<void>((resolve, reject) => {
    const slots = new Set<Slot>();
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      for (const s of slots) {
        clearTimeout(s.timer);
        void s.worker.terminate();
      }
      slots.clear();
      if (err) reject(err);
      else resolve();
    };
    const record = (result: SimTrialResult, isNondeterministic: boolean) => {
      results.set(result.seed, result);
      if (isNondeterministic) nondeterministic.add(result.seed);
      hooks.onResult?.(result, isNondeterministic);
      opts.onSeed?.(result, results.size, opts.seeds);
      if (opts.stopAtFirstFailure && result.verdict !== 'pass') lowestFailure = Math.min(lowestFailure, result.seed);
    };
    const retire = (s: Slot) => {
      clearTimeout(s.timer);
      slots.delete(s);
      s.worker.removeAllListeners();
      s.worker.on('error', () => undefined);
      void s.worker.terminate();
    };
    const feed = (s: Slot) => {
      s.seed = undefined;
      clearTimeout(s.timer);
      if (settled) return;
      if (next < end && next <= lowestFailure && !opts.signal?.aborted) {
        const seed = next++;
        s.seed = seed;
        s.startedAt = performance.now();
        s.timer = setTimeout(() => overrun(s, `seed ran past its wall-time budget of ${wallMs * runs} ms of real time (a loop that never yields?)`), wallMs * runs);
        s.worker.postMessage({ t: 'run', seed } satisfies ToWorker);
        return;
      }
      retire(s);
      if (slots.size === 0) settle();
    };
    /** The seed a worker runs went over budget: it gets verdict timeout, and a fresh worker takes the worker's place. */
    const overrun = (s: Slot, reason: string) => {
      const seed = s.seed;
      retire(s);
      if (seed === undefined) return settle(new UserError(`simulation: ${reason} while the system loaded`));
      record(overBudget(scenario, seed, reason, performance.now() - (s.startedAt ?? started)), false);
      spawn();
    };
    const spawn = () => {
      // Simulated nodes see no environment, like live ones (cluster/node-process.ts).
      const worker = new Worker(workerFile, { workerData, stdout: true, stderr: true, env: {}, resourceLimits: { maxOldGenerationSizeMb: heapMb } });
      // What the system prints goes nowhere: its logs are events (rt.log).
      worker.stdout.resume();
      worker.stderr.resume();
      const s: Slot = { worker };
      slots.add(s);
      // Loading the system has a budget too (never below the default, since a loaded machine loads slowly): a module that loops at import would hold the search.
      const loadMs = Math.max(MIN_SEED_WALL_MS, wallMs);
      s.timer = setTimeout(() => overrun(s, `the system did not load within ${loadMs} ms of real time`), loadMs);
      worker.on('message', (m: FromWorker) => {
        if (m.t === 'failed') return settle(new Error(`simulation worker: ${m.message}`));
        if (m.t === 'ready') {
          scenario = m.scenario;
          wallMs = seedWallMs(m.timeoutMs, limits);
        } else if (m.result.seed === s.seed) record(m.result, m.nondeterministic);
        feed(s);
      });
      worker.on('error', (err: Error & { code?: string }) => {
        if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') overrun(s, `seed ran past its memory budget of ${heapMb} MB of heap`);
        else settle(err);
      });
      worker.on('exit', (code) => {
        if (slots.has(s)) settle(new Error(`a simulation worker exited (code ${code}) in the middle of the search`));
      });
    };
    for (let i = 0; i < Math.min(concurrency, opts.seeds); i++) spawn();
    if (slots.size === 0) settle();
  });

  const last = Math.min(end - 1, lowestFailure);
  const ordered: SimTrialResult[] = [];
  for (let seed = from; seed <= last; seed++) {
    const r = results.get(seed);
    if (r !== undefined) ordered.push(r);
  }
  return tally(scenario, from, ordered, [...nondeterministic].filter((s) => s <= last).sort((a, b) => a - b), performance.now() - started);
}
