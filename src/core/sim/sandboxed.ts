import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import type * as Esbuild from 'esbuild';
import type { z } from 'zod';
import { defaultBugsDir, scenarioFile, type SystemEntry } from '../bugs/catalog';
import { DEFAULT_SEED } from '../bugs/runs';
import { nodeEnv } from '../cluster/node-process';
import { signalGroup } from '../cluster/process-registry';
import { UserError } from '../errors';
import { packageRoot } from '../paths';
import { redact } from '../secrets';
import type { Isolation } from '../sandbox/levels';
import { sandboxCommand } from '../sandbox/sandbox';
import { ChildMessage, ReplayRunSchema, SeedSearchSchema, ShrunkScheduleSchema, type ChildRequest } from './child-protocol';
import { CHILD_HEAP_MB, CHILD_START_MS, seedWallMs, type SeedLimits } from './limits';
import { writeReplayTrial, type ReplayOptions, type ReplayResult } from './replay';
import { scenarioFiles } from './scenario-files';
import { tally, type SeedSearchOptions, type SeedSearchResult } from './search';
import { DEFAULT_SHRINK_RUNS, type ShrinkOptions, type ShrunkSchedule } from './shrink';
import type { SimTrialResult } from './sim-trial';
import { snapshotSource, userTempDir } from './snapshot-cache';

// Every simulation of submitted code runs here: in a child process under the sandbox
// (sandbox/sandbox.ts) that sees the code's snapshot and the scenario's files
// read-only, its scratch folder, and nothing of the bug set, the harness or $HOME.
// The harness never imports the code itself.

interface ChildScripts {
  child: string;
  worker: string;
}

/** A worker costs a module load; below this many seeds each, fewer workers are faster. */
const SEEDS_PER_WORKER = 10;
/** Bytes of a line from the child, and of its output kept for an error message. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const OUTPUT_TAIL_BYTES = 4096;
/** Real ms the child may take on top of its seeds' budgets (start-up, loading). */
const CHILD_SLACK_MS = 30_000;

function defaultConcurrency(seeds: number): number {
  return Math.max(1, Math.min(os.availableParallelism(), Math.floor(seeds / SEEDS_PER_WORKER)));
}

let fromSource: ChildScripts | undefined;

/**
 * Under tsx (tests, benchmarks) the child and worker bundles are built from the
 * sources once per process, so a run never uses a stale dist/ and the sandbox never
 * needs the sources or node_modules (nor tsx, whose compiler is a child process).
 */
function buildFromSource(): ChildScripts {
  if (fromSource !== undefined) return fromSource;
  const esbuild = createRequire(__filename)('esbuild') as typeof Esbuild;
  const outdir = fs.mkdtempSync(path.join(userTempDir(), 'sim-build-'));
  process.once('exit', () => fs.rmSync(outdir, { recursive: true, force: true }));
  esbuild.buildSync({
    entryPoints: { 'sim-child': path.join(__dirname, 'child-entry.ts'), 'sim-worker': path.join(__dirname, 'worker-entry.ts') },
    outdir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  return (fromSource = { child: path.join(outdir, 'sim-child.js'), worker: path.join(outdir, 'sim-worker.js') });
}

/** The child's and its workers' bundles: beside this bundle in dist/, or built from source. */
function childScripts(): ChildScripts {
  if (__filename.endsWith('.ts')) return buildFromSource();
  const scripts = { child: path.join(__dirname, 'sim-child.js'), worker: path.join(__dirname, 'sim-worker.js') };
  for (const file of Object.values(scripts)) if (!fs.existsSync(file)) throw new Error(`the simulation bundle ${file} is missing: run \`npm run build\` first`);
  return scripts;
}

interface ChildSession<T> {
  request: ChildRequest;
  /** What the child's final value must be. */
  result: z.ZodType<T>;
  /** A folder the child may write. */
  scratch?: string;
  /** Real ms the child may run once the scenario (of `timeoutMs` virtual ms) is loaded. */
  wallMs: (timeoutMs: number) => number;
  onProgress?: (m: Extract<ChildMessage, { t: 'seed' | 'shrink-run' }>) => void;
  signal?: AbortSignal;
}

type ChildOutcome<T> = { value: T; isolation: Isolation } | { cancelled: true; isolation: Isolation };

function tail(stream: Readable): () => string {
  let kept = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    kept = (kept + chunk).slice(-OUTPUT_TAIL_BYTES);
  });
  return () => redact(kept.trim());
}

/** Runs one request in a sandboxed child; its messages are checked against the protocol, and it is killed past its limits or on cancel. */
function runChild<T>(session: ChildSession<T>): Promise<ChildOutcome<T>> {
  const scripts = childScripts();
  const { target } = session.request;
  const command = sandboxCommand(
    {
      script: scripts.child,
      readOnly: [target.srcRoot, scripts.worker, ...scenarioFiles(target.scenarioPath)],
      readWrite: session.scratch !== undefined ? [session.scratch] : [],
      env: nodeEnv({}),
      cwd: target.srcRoot,
      workers: true,
      limits: { heapMb: CHILD_HEAP_MB },
    },
    [packageRoot(), defaultBugsDir(), os.homedir()],
  );
  const { isolation } = command;
  return new Promise<ChildOutcome<T>>((resolve, reject) => {
    const child = spawn(command.command, command.args, { cwd: command.cwd, env: command.env, detached: process.platform !== 'win32', stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
    const output = tail(child.stderr);
    child.stdout.resume();
    let outcome: { ok: ChildOutcome<T> } | { err: Error } | undefined;
    let timer: NodeJS.Timeout | undefined;
    const kill = () => {
      if (child.pid !== undefined && process.platform !== 'win32') signalGroup(child.pid, 'SIGKILL');
      else child.kill('SIGKILL');
    };
    const finish = (o: { ok: ChildOutcome<T> } | { err: Error }) => {
      if (outcome !== undefined) return;
      outcome = o;
      clearTimeout(timer);
      session.signal?.removeEventListener('abort', onAbort);
      kill();
    };
    const limit = (ms: number, what: string) => {
      clearTimeout(timer);
      timer = setTimeout(() => finish({ err: new UserError(`simulation stopped: ${what} (${ms} ms of real time) ran out`) }), ms);
    };
    const onAbort = () => finish({ ok: { cancelled: true, isolation } });
    if (session.signal?.aborted) onAbort();
    session.signal?.addEventListener('abort', onAbort, { once: true });
    limit(CHILD_START_MS, 'the time to load the scenario');

    const onMessage = (m: ChildMessage) => {
      switch (m.t) {
        case 'ready': {
          const ms = session.wallMs(m.timeoutMs);
          return limit(ms, 'the simulation\'s overall wall-time limit');
        }
        case 'seed':
        case 'shrink-run':
          return session.onProgress?.(m);
        case 'error':
          return finish({ err: m.user ? new UserError(m.message) : new Error(`simulation: ${m.message}`) });
        case 'done': {
          const parsed = session.result.safeParse(m.value);
          return finish(parsed.success ? { ok: { value: parsed.data, isolation } } : { err: new Error(`the simulation child gave a malformed result: ${parsed.error.message.slice(0, 500)}`) });
        }
      }
    };
    const messages = child.stdio[3] as Readable;
    let buffered = '';
    messages.setEncoding('utf8');
    messages.on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0 && outcome === undefined; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let parsed: ReturnType<typeof ChildMessage.safeParse>;
        try {
          // The child knows none of the harness's secrets: what it says is redacted here (secrets.ts).
          parsed = ChildMessage.safeParse(JSON.parse(redact(line)));
        } catch {
          return finish({ err: new Error('the simulation child sent a line that is not JSON') });
        }
        if (!parsed.success) return finish({ err: new Error(`the simulation child sent a malformed message: ${parsed.error.message.slice(0, 500)}`) });
        onMessage(parsed.data);
      }
      if (buffered.length > MAX_MESSAGE_BYTES) finish({ err: new Error(`the simulation child sent a message over ${MAX_MESSAGE_BYTES} bytes`) });
    });
    messages.on('error', () => undefined);
    child.stdin.on('error', () => undefined);
    child.on('error', (err) => finish({ err }));
    child.on('close', (code, signal) => {
      if (outcome === undefined) {
        const why = signal !== null ? `was killed by ${signal}` : `exited (code ${code})`;
        const out = output();
        finish({ err: new Error(`the simulation child ${why} before it answered${out !== '' ? `:\n${out}` : ''}`) });
      }
      const o = outcome as { ok: ChildOutcome<T> } | { err: Error };
      if ('ok' in o) resolve(o.ok);
      else reject(o.err);
    });
    // stdin stays open: its end tells the child that the harness is gone.
    child.stdin.write(JSON.stringify(session.request) + '\n');
  });
}

/** The code's snapshot, made and checked in the harness (snapshot-cache.ts), and the scenario, for the child. */
function childTarget(system: SystemEntry, sourceDir: string, scenarioPath: string): ChildRequest['target'] {
  return { manifest: system.manifest, srcRoot: snapshotSource(sourceDir), scenarioPath };
}

/**
 * Runs many seeds of a scenario in simulation against the code in `sourceDir`, in the
 * sandboxed child's worker pool, each seed within its budgets (limits.ts). Cancelling
 * kills the child; the result then covers the seeds that finished, from the first on.
 */
export function simulateSeeds(system: SystemEntry, sourceDir: string, scenario: string, opts: SeedSearchOptions): Promise<SeedSearchResult> {
  return simulateSeedsFile(system, sourceDir, scenarioFile(system, scenario), opts);
}

/** As simulateSeeds, with a scenario module from anywhere (benchmarks). */
export async function simulateSeedsFile(system: SystemEntry, sourceDir: string, scenarioPath: string, opts: SeedSearchOptions): Promise<SeedSearchResult> {
  const started = performance.now();
  const from = opts.from ?? DEFAULT_SEED;
  const concurrency = opts.concurrency ?? defaultConcurrency(opts.seeds);
  const runs = opts.checkDeterminism === true ? 2 : 1;
  const seen = new Map<number, { result: SimTrialResult; nondeterministic: boolean }>();
  const request: ChildRequest = {
    op: 'search',
    target: childTarget(system, sourceDir, scenarioPath),
    seeds: opts.seeds,
    from,
    concurrency,
    ...(opts.stopAtFirstFailure !== undefined && { stopAtFirstFailure: opts.stopAtFirstFailure }),
    ...(opts.checkDeterminism !== undefined && { checkDeterminism: opts.checkDeterminism }),
    ...(opts.sim && { sim: opts.sim }),
    ...(opts.limits && { limits: opts.limits }),
  };
  const outcome = await runChild({
    request,
    result: SeedSearchSchema,
    wallMs: (timeoutMs) => opts.wallMs ?? seedWallMs(timeoutMs, opts.limits) * runs * Math.ceil(opts.seeds / concurrency) + CHILD_SLACK_MS,
    onProgress: (m) => {
      if (m.t !== 'seed') return;
      seen.set(m.result.seed, { result: m.result, nondeterministic: m.nondeterministic });
      opts.onSeed?.(m.result, m.done, m.total);
    },
    signal: opts.signal,
  });
  if ('value' in outcome) return { ...outcome.value, isolation: outcome.isolation };
  // Cancelled: the seeds that finished without a gap, up to the first failure when that stops the search.
  const ordered: SimTrialResult[] = [];
  const nondeterministic: number[] = [];
  for (let seed = from, r = seen.get(seed); r !== undefined; r = seen.get(++seed)) {
    ordered.push(r.result);
    if (r.nondeterministic) nondeterministic.push(seed);
    if (opts.stopAtFirstFailure && r.result.verdict !== 'pass') break;
  }
  const name = ordered[0]?.scenario ?? path.basename(scenarioPath, '.mjs');
  return { ...tally(name, from, ordered, nondeterministic, performance.now() - started), isolation: outcome.isolation };
}

/** A shrink's or replay's budgets: each run's (limits.ts), and real ms for the whole child (by default every run's budget and some slack). */
export interface ChildLimits {
  limits?: SeedLimits;
  wallMs?: number;
}

export type SandboxedShrink = ShrunkSchedule & { isolation: Isolation };

/** Shrinks a failing seed's schedule (shrink.ts) in the sandboxed child; the whole shrink has every run's budget. */
export async function shrinkSeed(system: SystemEntry, sourceDir: string, scenario: string, seed: number, opts: ShrinkOptions & ChildLimits = {}): Promise<SandboxedShrink> {
  const request: ChildRequest = {
    op: 'shrink',
    target: childTarget(system, sourceDir, scenarioFile(system, scenario)),
    seed,
    ...(opts.maxRuns !== undefined && { maxRuns: opts.maxRuns }),
    ...(opts.sim && { sim: opts.sim }),
  };
  const outcome = await runChild({
    request,
    result: ShrunkScheduleSchema,
    wallMs: (timeoutMs) => opts.wallMs ?? seedWallMs(timeoutMs, opts.limits) * ((opts.maxRuns ?? DEFAULT_SHRINK_RUNS) + 2) + CHILD_SLACK_MS,
    onProgress: (m) => {
      if (m.t === 'shrink-run') opts.onRun?.(m.runs, m.kept);
    },
    signal: opts.signal,
  });
  if (!('value' in outcome)) throw new UserError('shrinking was cancelled');
  return { ...outcome.value, isolation: outcome.isolation };
}

export type SandboxedReplay = ReplayResult & { isolation: Isolation };

/** A file the child wrote: a regular file, never read through a link the child may have left in its place. */
function readChildFile(file: string): Buffer {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    throw new Error(`the simulation child left no events file (${err instanceof Error ? err.message : String(err)})`);
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw new Error('the simulation child left something other than a file for its events');
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Replays one seed (or shrunk schedule) in the sandboxed child, which writes the events in a scratch folder; they are moved to `opts.eventsFile`, with trial.json beside them. */
export async function replaySeed(system: SystemEntry, sourceDir: string, scenario: string, seed: number, opts: ReplayOptions & ChildLimits): Promise<SandboxedReplay> {
  const scratch = fs.mkdtempSync(path.join(userTempDir(), 'replay-'));
  try {
    const scratchEvents = path.join(scratch, 'events.jsonl');
    const request: ChildRequest = {
      op: 'replay',
      target: childTarget(system, sourceDir, scenarioFile(system, scenario)),
      seed,
      eventsFile: scratchEvents,
      ...(opts.keep && { keep: [...opts.keep] }),
      ...(opts.sim && { sim: opts.sim }),
    };
    const outcome = await runChild({ request, result: ReplayRunSchema, scratch, wallMs: (timeoutMs) => opts.wallMs ?? seedWallMs(timeoutMs, opts.limits) + CHILD_SLACK_MS });
    if (!('value' in outcome)) throw new UserError('the replay was cancelled');
    // Likewise its events.
    const events = Buffer.from(redact(readChildFile(scratchEvents).toString('utf8')));
    fs.mkdirSync(path.dirname(opts.eventsFile), { recursive: true });
    fs.writeFileSync(opts.eventsFile, events);
    writeReplayTrial(opts.eventsFile, seed, outcome.value.result);
    const digest = createHash('sha256').update(events).digest('hex');
    return { ...outcome.value, eventsFile: opts.eventsFile, digest, isolation: outcome.isolation };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
