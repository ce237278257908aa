/**
 * Benchmark (not a test): simulated seeds per second on this machine, for a 3-node
 * RaftKV cluster running a 2-second scenario, for the system's regression scenarios,
 * and for every bug of the set on its buggy and its correct code; with --live N, also
 * live trials per minute of each bug's reproducer.
 *
 *   npx tsx bench/sim-seeds.ts [--seeds N] [--live N] [--raftkv-only]
 *
 * --raftkv-only stops after the RaftKV rows (the figure docs/measurements.md leads with).
 *
 * Prints wall-clock rates (what a user waits for) and rates per CPU second (what the
 * machine's load does not change), with the load average beside them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { findSystem, loadCatalog, type SystemEntry } from '../src/core/bugs/catalog';
import { materialiseBuggySource } from '../src/core/bugs/workspace';
import { runScenarioTrials } from '../src/core/repro/trials';
import { simulateSeedsFile } from '../src/core/sim/sandboxed';
import { runSimTrial } from '../src/core/sim/sim-trial';
import { prepareTarget, prepareTargetFile, type SimTarget } from '../src/core/sim/target';

// The CLI runs without source maps; under tsx they would make every log call format a mapped stack.
process.setSourceMapsEnabled(false);

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

interface Row {
  what: string;
  code: string;
  seeds: number;
  failed: number;
  wallRate: number;
  cpuRate: number;
  eventsPerSeed: number;
  virtualSPerSeed: number;
}

async function measure(what: string, code: string, target: SimTarget, seeds: number): Promise<Row> {
  // Warm the JIT first: the first few dozen seeds run several times slower than the rest.
  const warmUntil = performance.now() + 3000;
  for (let seed = 10_001; performance.now() < warmUntil || seed <= 10_020; seed++) await runSimTrial(target, { seed });
  let failed = 0;
  let events = 0;
  let virtualMs = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let seed = 1; seed <= seeds; seed++) {
    const { result } = await runSimTrial(target, { seed });
    if (result.verdict !== 'pass') failed++;
    events += result.events;
    virtualMs += result.virtualMs;
  }
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const row = { what, code, seeds, failed, wallRate: seeds / wallS, cpuRate: seeds / ((cpu.user + cpu.system) / 1e6), eventsPerSeed: events / seeds, virtualSPerSeed: virtualMs / seeds / 1000 };
  print(row);
  return row;
}

function print(r: Row): void {
  const cells = [
    r.what.padEnd(44),
    r.code.padEnd(7),
    String(r.seeds).padStart(5),
    `${((r.failed / r.seeds) * 100).toFixed(0)}%`.padStart(6),
    r.wallRate.toFixed(1).padStart(9),
    r.cpuRate.toFixed(1).padStart(9),
    r.eventsPerSeed.toFixed(0).padStart(8),
    r.virtualSPerSeed.toFixed(2).padStart(8),
  ];
  console.log(cells.join('  '));
}

async function liveRate(system: SystemEntry, codeDir: string, scenario: string, trials: number): Promise<number> {
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-bench-live-'));
  try {
    const t0 = performance.now();
    await runScenarioTrials(system, codeDir, scenario, runDir, { trials });
    return trials / ((performance.now() - t0) / 60_000);
  } finally {
    fs.rmSync(runDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const seeds = flag('--seeds', 200);
  const live = flag('--live', 0);
  const catalog = await loadCatalog();
  const raftkv = findSystem(catalog, 'raftkv');
  console.log(`${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(['scenario'.padEnd(44), 'code'.padEnd(7), 'seeds', 'failed', 'seeds/s', 'seeds/cpu-s', 'events', 'virt s'].join('  '));

  const twoSeconds = path.join(__dirname, 'scenarios', 'raftkv-2s.mjs');
  await measure('raftkv, 3 nodes, 2-second scenario', 'correct', await prepareTargetFile(raftkv, raftkv.dir, twoSeconds), seeds);
  const cores = os.availableParallelism();
  if (cores > 1) {
    // The sandboxed child's and its workers' start-up (module loading, JIT warm-up) is counted: this is what `ddbench sim` gets.
    const many = seeds * 5;
    const r = await simulateSeedsFile(raftkv, raftkv.dir, twoSeconds, { seeds: many, concurrency: cores });
    console.log(`${`raftkv, 2-second scenario, ${cores} worker threads`.padEnd(44)}  correct  ${String(many).padStart(5)}  ${`${((r.failedSeeds.length / many) * 100).toFixed(0)}%`.padStart(6)}  ${r.seedsPerSecond.toFixed(1).padStart(9)}`);
  }
  for (const test of raftkv.manifest.tests) await measure(`raftkv regression: ${test}`, 'correct', await prepareTarget(raftkv, raftkv.dir, test), Math.min(seeds, 50));
  if (process.argv.includes('--raftkv-only')) return;

  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-bench-'));
  const liveRows: string[] = [];
  try {
    for (const bug of catalog.bugs) {
      const system = findSystem(catalog, bug.system);
      const buggyDir = path.join(scratch, bug.id);
      materialiseBuggySource(system, bug, buggyDir);
      const scenario = bug.manifest.reproducer.scenario;
      await measure(`${bug.id} (${scenario})`, 'buggy', await prepareTarget(system, buggyDir, scenario), seeds);
      await measure(`${bug.id} (${scenario})`, 'fixed', await prepareTarget(system, system.dir, scenario), seeds);
      if (live > 0) liveRows.push(`${bug.id}: ${(await liveRate(system, buggyDir, scenario, live)).toFixed(1)} live trials per minute (${live} trials, ${os.cpus().length} at once)`);
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  for (const line of liveRows) console.log(line);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
