/**
 * Benchmark (not a test): live clusters on the process and the docker backend.
 *
 *   npx tsx bench/cluster-start.ts [--runs N] [--trials N] [--backends process,docker]
 *
 * 1. Start to ready (every node connected to the router) and stop, for 3 and 5 echo
 *    nodes, N runs each (median, min, max). The docker backend's first start in a
 *    process also lists the libraries and hashes the node image's files (then cached),
 *    so it is reported apart.
 * 2. Live trials per minute of RaftKV's `basic` regression scenario on its correct code,
 *    N trials at the default concurrency (one per core).
 *
 * Prints the load average beside the figures: the machine's load moves them a lot.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { findSystem, loadCatalog } from '../src/core/bugs/catalog';
import { BACKENDS, createCluster, type BackendName } from '../src/core/cluster';
import { runScenarioTrials } from '../src/core/repro/trials';
import { ensureLiveHost } from '../test/fixtures/live-host-build';

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const echoDir = path.resolve(__dirname, '..', 'test', 'fixtures', 'echo-system');

async function startStop(backend: BackendName, nodes: number): Promise<{ startMs: number; stopMs: number }> {
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-bench-start-'));
  const ids = Array.from({ length: nodes }, (_, i) => `n${i + 1}`);
  const cluster = createCluster({ sourceDir: echoDir, entry: 'echo.mjs', nodes: ids, config: {}, runDir, seed: 1 }, { backend });
  try {
    const t0 = performance.now();
    await cluster.start();
    const t1 = performance.now();
    await cluster.stop();
    return { startMs: t1 - t0, stopMs: performance.now() - t1 };
  } finally {
    await cluster.stop();
    fs.rmSync(runDir, { recursive: true, force: true });
  }
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return `median ${s(median)} (min ${s(sorted[0] ?? NaN)}, max ${s(sorted.at(-1) ?? NaN)})`;
}

async function trialsPerMinute(backend: BackendName, trials: number): Promise<string> {
  const catalog = await loadCatalog();
  const system = findSystem(catalog, 'raftkv');
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-bench-trials-'));
  try {
    const t0 = performance.now();
    const r = await runScenarioTrials(system, system.dir, 'basic', runDir, { trials, backend: { backend } });
    const minutes = (performance.now() - t0) / 60_000;
    const mean = r.trials.reduce((sum, t) => sum + t.durationMs, 0) / r.trials.length / 1000;
    return `${(r.trials.length / minutes).toFixed(1)} trials/min (${r.passed}/${r.trials.length} passed, mean trial ${mean.toFixed(1)} s, ${os.cpus().length} at once)`;
  } finally {
    fs.rmSync(runDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const runs = Number(flag('--runs', '3'));
  const trials = Number(flag('--trials', '4'));
  const backends = flag('--backends', BACKENDS.join(',')).split(',') as BackendName[];
  await ensureLiveHost();
  console.log(`cluster start-to-ready, ${runs} runs each; ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (const backend of backends) {
    if (backend === 'docker') {
      const first = await startStop(backend, 3);
      console.log(`  docker   first start in this process (ldd + image hash, then cached): ${(first.startMs / 1000).toFixed(2)} s`);
    }
    for (const nodes of [3, 5]) {
      const figures: { startMs: number; stopMs: number }[] = [];
      for (let i = 0; i < runs; i++) figures.push(await startStop(backend, nodes));
      console.log(`  ${backend.padEnd(8)} ${nodes} nodes: start ${summary(figures.map((f) => f.startMs))}; stop ${summary(figures.map((f) => f.stopMs))}`);
    }
  }
  console.log(`\nlive trials per minute: raftkv "basic" on the correct code, ${trials} trials`);
  for (const backend of backends) console.log(`  ${backend.padEnd(8)} ${await trialsPerMinute(backend, trials)}`);
  console.log(`load average after: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
