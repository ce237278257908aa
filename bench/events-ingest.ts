/**
 * Benchmark (not a test): ingest + index of a 1,000,000-event runtime JSONL.
 *
 *   npx tsx bench/events-ingest.ts [events=1000000] [runs=3]
 *
 * Generates a realistic run (4 nodes and a client exchanging messages with vector
 * clocks, logs with fields and source locations) in the OS temp folder, then loads
 * it in a fresh child process per run so each run's peak RSS is its own. Prints
 * the median and every run's figures.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { causality } from '../src/core/events/causality';
import { forEachLine } from '../src/core/events/lines';
import { loadTimeline } from '../src/core/events/load';
import { aggregate, queryEvents } from '../src/core/events/query';
import type { EventRecord } from '../src/core/events/record';
import { prng } from './support';

interface RunFigures {
  loadMs: number;
  /** CPU time of the load (user + system), which a busy machine inflates less than wall time. */
  loadCpuMs: number;
  causalityMs: number;
  aggregateMs: number;
  queryMs: number;
  events: number;
  bad: number;
  peakRssMb: number;
  heapUsedMb: number;
  externalMb: number;
}

const NODES = ['n1', 'n2', 'n3', 'n4'];
const CLIENT = 'client-1';
const LOG_MESSAGES = ['append entries accepted', 'became follower', 'commit index advanced', 'snapshot taken', 'heartbeat timeout', 'applied entry', 'lease renewed'];
const TYPES = ['AppendEntries', 'AppendEntriesReply', 'RequestVote', 'Put', 'PutReply'];


async function generate(file: string, count: number): Promise<void> {
  const random = prng(42);
  const endpoints = [...NODES, CLIENT];
  const clocks = new Map(endpoints.map((n) => [n, { [n]: 0 } as Record<string, number>]));
  const inFlight: { to: string; from: string; msgId: string; type: string; vc: Record<string, number>; body: unknown; due: number }[] = [];
  const sent = new Map(endpoints.map((n) => [n, 0]));
  const out = fs.createWriteStream(file);
  let ts = 0;
  let id = 0;
  let batch: string[] = [];
  const emit = async (e: EventRecord): Promise<void> => {
    batch.push(JSON.stringify({ id: String(++id), ...e }));
    if (batch.length >= 5000) {
      if (!out.write(batch.join('\n') + '\n')) await once(out, 'drain');
      batch = [];
    }
  };
  const tick = (node: string): Record<string, number> => {
    const vc = clocks.get(node)!;
    vc[node]++;
    return { ...vc };
  };
  while (id < count) {
    ts += Math.floor(random() * 40) + 1;
    const due = inFlight.findIndex((m) => m.due <= ts);
    if (due >= 0 && random() < 0.9) {
      const m = inFlight.splice(due, 1)[0];
      const vc = clocks.get(m.to)!;
      for (const [k, v] of Object.entries(m.vc)) if (v > (vc[k] ?? 0)) vc[k] = v;
      await emit({ ts, node: m.to, kind: 'recv', msg: m.type, msgId: m.msgId, peer: m.from, vc: tick(m.to), fields: { body: m.body } });
      continue;
    }
    const node = random() < 0.03 ? CLIENT : NODES[Math.floor(random() * NODES.length)];
    if (random() < 0.3) {
      const to = NODES.filter((n) => n !== node)[Math.floor(random() * (NODES.length - 1))];
      const msgId = `${node}:${sent.set(node, sent.get(node)! + 1).get(node)}`;
      const type = TYPES[Math.floor(random() * TYPES.length)];
      const body = { term: 3 + Math.floor(ts / 1e7), index: id, entries: random() < 0.5 ? [{ key: `k${id % 97}`, value: `v${id}` }] : [] };
      const vc = tick(node);
      await emit({ ts, node, kind: 'send', msg: type, msgId, peer: to, vc, fields: { body } });
      inFlight.push({ to, from: node, msgId, type, vc, body, due: ts + Math.floor(random() * 400) });
    } else {
      const level = random() < 0.02 ? 'warn' : random() < 0.005 ? 'error' : random() < 0.3 ? 'debug' : 'info';
      const msg = LOG_MESSAGES[Math.floor(random() * LOG_MESSAGES.length)];
      await emit({ ts, node, kind: 'log', level, msg, vc: tick(node), src: { file: 'src/raft.mjs', line: 100 + Math.floor(random() * 400) }, fields: { term: 3, index: id, commit: id - 5 } });
    }
  }
  batch.push('');
  out.write(batch.join('\n'));
  await new Promise<void>((resolve) => out.end(resolve));
}

async function child(file: string): Promise<void> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const store = await loadTimeline([file]);
  const t1 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const hb = causality(store);
  const t2 = performance.now();
  const [from, to] = [store.ts[0], store.ts[store.size - 1] + 1];
  aggregate(store, { from, to, width: 1600 });
  const t3 = performance.now();
  queryEvents(store, { kinds: ['log'], minLevel: 'warn', from: from + (to - from) / 4, to: from + (to - from) / 2 });
  const t4 = performance.now();
  (globalThis as { gc?: () => void }).gc?.();
  const mem = process.memoryUsage();
  const figures: RunFigures = {
    loadMs: t1 - t0,
    loadCpuMs: (cpu.user + cpu.system) / 1000,
    causalityMs: t2 - t1,
    aggregateMs: t3 - t2,
    queryMs: t4 - t3,
    events: store.size,
    bad: store.badCount + hb.issueCount,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    heapUsedMb: mem.heapUsed / 2 ** 20,
    // `external` already includes the array buffers: the typed-array columns (sized for the events the file's size suggests).
    externalMb: mem.external / 2 ** 20,
  };
  process.send?.(figures);
}

/** The floor any JSONL reader pays: read the file and JSON.parse every line, keeping nothing. */
async function baseline(file: string): Promise<void> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let parsed = 0;
  await forEachLine(file, (line) => {
    if (JSON.parse(line) !== null) parsed++;
  });
  const cpu = process.cpuUsage(cpu0);
  process.send?.({ ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, parsed });
}

function runChild<T>(mode: '--child' | '--baseline', file: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const proc = fork(__filename, [mode, file], { execArgv: [...process.execArgv, '--expose-gc'] });
    proc.once('message', (m) => resolve(m as T));
    proc.once('error', reject);
    proc.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`benchmark child exited with ${code}`))));
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child') return child(process.argv[3]);
  if (process.argv[2] === '--baseline') return baseline(process.argv[3]);
  const count = Number(process.argv[2] ?? 1_000_000);
  const runs = Number(process.argv[3] ?? 3);
  const file = path.join(os.tmpdir(), `ddbench-bench-events-${count}.jsonl`);
  if (!fs.existsSync(file)) {
    const g0 = performance.now();
    await generate(file, count);
    console.log(`generated ${file} in ${((performance.now() - g0) / 1000).toFixed(1)} s`);
  }
  console.log(
      `input: ${count} events, ${(fs.statSync(file).size / 2 ** 20).toFixed(0)} MiB; ${runs} runs, each in a fresh process; ` +
      `Node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}`,
  );
  const base = await runChild<{ ms: number; cpuMs: number }>('--baseline', file);
  console.log(`baseline (read + JSON.parse of every line, nothing kept): ${base.ms.toFixed(0)} ms, CPU ${base.cpuMs.toFixed(0)} ms`);
  const all: RunFigures[] = [];
  for (let r = 0; r < runs; r++) {
    const f = await runChild<RunFigures>('--child', file);
    all.push(f);
    console.log(
      `run ${r + 1}: ingest+index ${f.loadMs.toFixed(0)} ms (CPU ${f.loadCpuMs.toFixed(0)} ms), happens-before ${f.causalityMs.toFixed(0)} ms, aggregate ${f.aggregateMs.toFixed(1)} ms, query ${f.queryMs.toFixed(1)} ms; ` +
        `peak RSS ${f.peakRssMb.toFixed(0)} MB, heap ${f.heapUsedMb.toFixed(0)} MB + columns ${f.externalMb.toFixed(0)} MB; ${f.events} events, ${f.bad} problems`,
    );
  }
  const m = (key: keyof RunFigures): string => median(all.map((f) => f[key])).toFixed(0);
  console.log(`load average now ${os.loadavg()[0].toFixed(1)}`);
  const ratio = median(all.map((f) => f.loadCpuMs)) / base.cpuMs;
  console.log(`median: ingest+index ${m('loadMs')} ms (CPU ${m('loadCpuMs')} ms, ${ratio.toFixed(1)}× the baseline's CPU), happens-before ${m('causalityMs')} ms, peak RSS ${m('peakRssMb')} MB, heap ${m('heapUsedMb')} MB, columns ${m('externalMb')} MB`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
