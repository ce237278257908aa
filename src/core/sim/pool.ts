import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { SystemEntry } from '../bugs/catalog';
import { packageRoot } from '../paths';
import { DEFAULT_SEED } from '../bugs/runs';
import { tally, type SeedSearchOptions, type SeedSearchResult } from './search';
import type { SimTrialResult } from './sim-trial';
import type { FromWorker, SimWorkerData, ToWorker } from './worker';

export interface WorkerScript {
  file: string;
  execArgv: string[];
}

/** What each worker loads: plain data, since a worker has its own modules. */
export interface WorkerTarget {
  system: SystemEntry;
  sourceDir: string;
  scenarioPath: string;
}

/**
 * The script a worker runs: from source (tests and benchmarks under tsx) the worker
 * entry through tsx's loader; from a bundle, the simulation worker's own bundle. None
 * when neither exists (then seeds run in this thread).
 */
export function workerScript(): WorkerScript | undefined {
  if (__filename.endsWith('.ts')) return { file: path.join(__dirname, 'worker-entry.ts'), execArgv: ['--require', 'tsx/cjs'] };
  const bundle = path.join(packageRoot(), 'dist', 'sim-worker.js');
  return fs.existsSync(bundle) ? { file: bundle, execArgv: [] } : undefined;
}

/**
 * Runs seeds in worker threads, handing out the next seed to whichever worker is
 * free. Each seed's run is independent of every other, so the result is the one the
 * sequential search gives: with stopAtFirstFailure, seeds past the lowest failing one
 * are not counted even if a worker already ran them.
 */
export async function searchSeedsInWorkers(target: WorkerTarget, opts: SeedSearchOptions, concurrency: number, script: WorkerScript): Promise<SeedSearchResult> {
  const from = opts.from ?? DEFAULT_SEED;
  const end = from + opts.seeds;
  const started = performance.now();
  const results = new Map<number, SimTrialResult>();
  const nondeterministic = new Set<number>();
  let scenario = path.basename(target.scenarioPath, '.mjs');
  let next = from;
  let lowestFailure = Infinity;
  const workerData: SimWorkerData = { kind: 'ddbench-sim-worker', system: target.system, sourceDir: target.sourceDir, scenarioPath: target.scenarioPath, checkDeterminism: opts.checkDeterminism === true, ...(opts.sim && { sim: opts.sim }) };

  await new Promise<void>((resolve, reject) => {
    const workers: Worker[] = [];
    /** Workers this search ended itself; any other exit is a crash. */
    const finished = new Set<Worker>();
    let running = 0;
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      for (const w of workers) {
        finished.add(w);
        void w.terminate();
      }
      if (err) reject(err);
      else resolve();
    };
    const feed = (w: Worker) => {
      const more = next < end && next <= lowestFailure && !opts.signal?.aborted;
      if (more) {
        w.postMessage({ t: 'run', seed: next++ } satisfies ToWorker);
        return;
      }
      finished.add(w);
      void w.terminate();
      if (--running === 0) settle();
    };
    for (let i = 0; i < Math.min(concurrency, opts.seeds); i++) {
      // Simulated nodes see no environment, like live ones (cluster/node-process.ts).
      const w = new Worker(script.file, { execArgv: script.execArgv, workerData, stdout: false, stderr: false, env: {} });
      workers.push(w);
      running++;
      w.on('message', (m: FromWorker) => {
        if (m.t === 'failed') return settle(new Error(`simulation worker: ${m.message}`));
        if (m.t === 'ready') scenario = m.scenario;
        else {
          const seed = m.result.seed;
          results.set(seed, m.result);
          if (m.nondeterministic) nondeterministic.add(seed);
          opts.onSeed?.(m.result, results.size, opts.seeds);
          if (opts.stopAtFirstFailure && m.result.verdict !== 'pass') lowestFailure = Math.min(lowestFailure, seed);
        }
        feed(w);
      });
      w.on('error', (err) => settle(err));
      w.on('exit', (code) => {
        if (!finished.has(w)) settle(new Error(`a simulation worker exited (code ${code}) in the middle of the search`));
      });
    }
    if (running === 0) settle();
  });

  const last = Math.min(end - 1, lowestFailure);
  const ordered: SimTrialResult[] = [];
  for (let seed = from; seed <= last; seed++) {
    const r = results.get(seed);
    if (r !== undefined) ordered.push(r);
  }
  return tally(scenario, from, ordered, [...nondeterministic].filter((s) => s <= last).sort((a, b) => a - b), performance.now() - started);
}
