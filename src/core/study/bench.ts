import * as path from 'node:path';
import { UserError } from '../errors';
import { acquireLock } from '../lock-file';
import type { RecordSet } from './collect';
import type { AttemptRecord, Condition } from './schema';

/**
 * Batch evaluation: every bug × model × condition × repeat, run a few at a time,
 * each job recording its attempt the moment it ends. Resuming reads the records and
 * skips every run already there, so a killed batch continues where it stopped and a
 * finished one is not run twice. Shards split the plan by position, so independent
 * machines (a Kubernetes indexed job, a CI matrix) can share it with no coordinator.
 */

export interface BenchJob {
  /** bug|model|condition|repeat: the identity resuming skips on. */
  key: string;
  bugId: string;
  model: string;
  condition: Condition;
  repeat: number;
}

export interface Shard {
  /** 0-based, as Kubernetes' JOB_COMPLETION_INDEX. */
  index: number;
  count: number;
}

export function benchKey(bugId: string, model: string, condition: Condition, repeat: number): string {
  return [bugId, model, condition, repeat].join('|');
}

/** "i/n" with 0 <= i < n. */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || count < 1 || index >= count) throw new UserError(`--shard ${text}: give i/n with 0 <= i < n, e.g. 0/4 (Kubernetes: $JOB_COMPLETION_INDEX/<completions>)`);
  return { index, count };
}

/** The plan in a fixed order (bug, model, condition, repeat), then this shard's share: every n-th job from i. */
export function planBench(o: { bugs: readonly string[]; models: readonly string[]; conditions: readonly Condition[]; repeats: number; shard?: Shard }): BenchJob[] {
  const jobs: BenchJob[] = [];
  for (const bugId of o.bugs) {
    for (const model of o.models) {
      for (const condition of o.conditions) {
        for (let repeat = 0; repeat < o.repeats; repeat++) jobs.push({ key: benchKey(bugId, model, condition, repeat), bugId, model, condition, repeat });
      }
    }
  }
  const shard = o.shard;
  return shard ? jobs.filter((_, i) => i % shard.count === shard.index) : jobs;
}

/** Runs already recorded; a run that ended in an error of the run itself is not done and runs again. */
/**
 * Takes OUT for this bench: two benches on one --out would run the same jobs in the same
 * run folders and crash one another, so the second refuses at start. A lock left by a
 * bench that died is taken over. Returns the release.
 */
export function lockBenchOut(out: string): () => void {
  return acquireLock(path.join(out, BENCH_LOCK), (pid) => `${out} is in use by another bench (pid ${pid}); wait for it to end, or give another --out`);
}

/** The lock file a running bench holds in its --out folder. */
export const BENCH_LOCK = 'bench.lock';

/** The jobs already done (of the study with `studyHash`, when given: another study's runs in the same folder are not this one's). */
export function completedKeys(set: Pick<RecordSet, 'attempts'>, studyHash?: string): Set<string> {
  return new Set(set.attempts.flatMap((a) => (a.bench && a.status !== 'error' && a.status !== 'in-progress' && a.status !== 'interrupted' && a.studyHash === studyHash ? [a.bench.key] : [])));
}

export interface BenchProgress {
  total: number;
  skipped: number;
  done: number;
  running: number;
  verified: number;
  errors: number;
  elapsedMs: number;
  /** Runs left at this session's pace so far; null before the first one ends. */
  etaMs: number | null;
  last?: { job: BenchJob; status: AttemptRecord['status'] | 'interrupted' };
}

export interface BenchRun {
  jobs: readonly BenchJob[];
  /** Keys already done (from the records). */
  completed: ReadonlySet<string>;
  concurrency: number;
  /** Runs and records one job in isolation, returning its record; undefined when it was interrupted (nothing is recorded, so it runs again on resume). */
  runJob(job: BenchJob, signal: AbortSignal): Promise<AttemptRecord | undefined>;
  onProgress?(p: BenchProgress): void;
  signal?: AbortSignal;
  now?: () => number;
}

export interface BenchSummary {
  total: number;
  skipped: number;
  ran: number;
  verified: number;
  errors: number;
  interrupted: boolean;
}

export async function runBench(o: BenchRun): Promise<BenchSummary> {
  const now = o.now ?? Date.now;
  const started = now();
  const todo = o.jobs.filter((j) => !o.completed.has(j.key));
  const p: BenchProgress = { total: o.jobs.length, skipped: o.jobs.length - todo.length, done: 0, running: 0, verified: 0, errors: 0, elapsedMs: 0, etaMs: null };
  const inner = new AbortController();
  const stop = () => inner.abort();
  o.signal?.addEventListener('abort', stop);
  const report = () => {
    p.elapsedMs = now() - started;
    const left = todo.length - p.done;
    p.etaMs = p.done ? (p.elapsedMs / p.done) * left : null;
    o.onProgress?.({ ...p });
  };
  let next = 0;
  let broken: unknown;
  const worker = async () => {
    while (next < todo.length && !inner.signal.aborted) {
      const job = todo[next++]!;
      p.running++;
      report();
      let record: AttemptRecord | undefined;
      try {
        record = await o.runJob(job, inner.signal);
      } catch (err) {
        // runJob records a run's own failures; a throw is the harness broken, so stop the batch (what is recorded stays).
        broken ??= err;
        inner.abort();
        return;
      } finally {
        p.running--;
      }
      if (!record) {
        p.last = { job, status: 'interrupted' };
        report();
        continue;
      }
      p.done++;
      if (record.status === 'verified') p.verified++;
      if (record.status === 'error') p.errors++;
      p.last = { job, status: record.status };
      report();
    }
  };
  try {
    report();
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, todo.length)) }, worker));
  } finally {
    o.signal?.removeEventListener('abort', stop);
  }
  if (broken !== undefined) throw broken;
  return { total: p.total, skipped: p.skipped, ran: p.done, verified: p.verified, errors: p.errors, interrupted: inner.signal.aborted && p.done + p.skipped < p.total };
}
