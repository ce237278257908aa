import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultBugsDir } from '../../bugs/catalog';
import { UserError } from '../../errors';
import { packageRoot } from '../../paths';
import { bwrapProgram } from '../../sandbox/isolation';
import { bwrapSystemBinds } from '../../sandbox/sandbox';
import { readLines } from '../../../runtime/ndjson';
import { upstreamCacheDir } from './cache';
import { hashTree } from './source-hash';
import type { UpstreamSpec } from '../../bugs/upstream-spec';
import { isAlive } from '../../pid';

/** Where the build sees its inputs inside the sandbox. */
const BUILD_ROOT = '/build';
const OUT = '/out';
const CACHE = '/cache';
/** How much of the compiler's output a failed build reports. */
const OUTPUT_LINES = 80;
const DEFAULT_TIMEOUT_MS = 20 * 60_000;

export interface UpstreamBuild {
  /** The source tree's hash, which names the build. */
  hash: string;
  /** The folder holding the build's outputs. */
  dir: string;
  /** The node's binary (the first output). */
  binary: string;
  /** The build was already in the cache. */
  cached: boolean;
  durationMs: number;
}

/** The code did not build: the compiler's own message is the verdict a person or an agent reads. */
export class BuildFailed extends UserError {
  constructor(
    readonly system: string,
    readonly output: string,
    readonly exitCode: number | null,
  ) {
    super(`${system}: the code does not build (exit ${exitCode ?? 'signal'}):\n${output}`);
    this.name = 'BuildFailed';
  }
}

export interface BuildOptions {
  signal?: AbortSignal;
  /** Each line the build prints, as it comes (progress for long cold builds). */
  onLine?(line: string): void;
  timeoutMs?: number;
}

/**
 * Builds an upstream system's source (a workspace's src/ or a scratch copy) inside a
 * bubblewrap sandbox without network, or returns the cached build of the same source.
 * Builds are kept by source hash under the user's cache; the toolchain's own caches
 * (GOCACHE) persist beside them, so a rebuild after an edit compiles only what changed.
 */
export async function buildUpstream(systemId: string, spec: UpstreamSpec, srcDir: string, opts: BuildOptions = {}): Promise<UpstreamBuild> {
  const started = Date.now();
  if (!fs.existsSync(srcDir)) throw new UserError(`${srcDir}: no source to build`);
  const hash = hashTree(srcDir);
  const cacheDir = upstreamCacheDir(systemId);
  const dir = path.join(cacheDir, 'builds', hash);
  const binary = path.join(dir, spec.build.outputs[0] as string);
  if (spec.build.outputs.every((o) => fs.existsSync(path.join(dir, o)))) return { hash, dir, binary, cached: true, durationMs: Date.now() - started };
  const bwrap = bwrapProgram();
  if (bwrap === undefined) throw new UserError(`${systemId}: building upstream code needs bubblewrap, which cannot run here (install it: apt-get install bubblewrap, or run \`ddbench setup upstream\`)`);
  fs.mkdirSync(path.join(cacheDir, 'builds'), { recursive: true });
  if (spec.build.workTree === undefined) return buildIn(systemId, spec, srcDir, { hash, dir, binary, started }, bwrap, opts);
  // A build in a work tree (make) writes beside the source: the builds that share it take turns.
  const work = path.join(cacheDir, spec.build.workTree);
  return withWorkTreeLock(work, opts.signal, async () => {
    if (spec.build.outputs.every((o) => fs.existsSync(path.join(dir, o)))) return { hash, dir, binary, cached: true, durationMs: Date.now() - started };
    mirrorTree(srcDir, work);
    try {
      return await buildIn(systemId, spec, work, { hash, dir, binary, started }, bwrap, opts);
    } catch (err) {
      // A failed build can leave half-made products that make takes for done (redis's
      // deps are built with errors ignored): the next build starts from a clean copy.
      fs.rmSync(work, { recursive: true, force: true });
      throw err;
    }
  });
}

async function buildIn(
  systemId: string,
  spec: UpstreamSpec,
  srcDir: string,
  target: { hash: string; dir: string; binary: string; started: number },
  bwrap: string,
  opts: BuildOptions,
): Promise<UpstreamBuild> {
  const { hash, dir, binary, started } = target;
  const cacheDir = upstreamCacheDir(systemId);
  const out = fs.mkdtempSync(path.join(cacheDir, 'builds', `.${hash.slice(0, 12)}-`));
  try {
    const caches = Object.entries(spec.build.caches).map(([variable, name]) => {
      const host = path.join(cacheDir, name);
      fs.mkdirSync(host, { recursive: true });
      return { variable, host, inner: `${CACHE}/${name}` };
    });
    const src = `${BUILD_ROOT}/${spec.build.mount}`;
    const fill = (s: string) => s.replaceAll('{src}', src).replaceAll('{out}', OUT).replaceAll('{cache}', CACHE);
    const env: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8' };
    for (const [k, v] of Object.entries(spec.build.env)) env[k] = fill(v);
    for (const c of caches) env[c.variable] = c.inner;
    const system = bwrapSystemBinds([packageRoot(), defaultBugsDir()]);
    // Debian reaches cc, awk and which through /etc/alternatives: a toolchain needs it.
    const args = ['--unshare-all', '--die-with-parent', '--cap-drop', 'ALL', '--clearenv', ...system.args, '--ro-bind-try', '/etc/alternatives', '/etc/alternatives', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp'];
    // A work tree is the build's own copy, mounted writable; a source tree is mounted read-only.
    args.push('--tmpfs', BUILD_ROOT, spec.build.workTree === undefined ? '--ro-bind' : '--bind', fs.realpathSync(srcDir), src, '--bind', out, OUT);
    for (const c of caches) args.push('--bind', c.host, c.inner);
    for (const [k, v] of Object.entries(env)) args.push('--setenv', k, v);
    args.push('--chdir', src, '--', ...spec.build.command.map(fill));
    const result = await run(bwrap, args, opts);
    if (result.code !== 0) throw new BuildFailed(systemId, result.tail.join('\n'), result.code);
    const missing = spec.build.outputs.filter((o) => !fs.existsSync(path.join(out, o)));
    if (missing.length > 0) throw new BuildFailed(systemId, `the build finished but wrote no ${missing.join(', ')}\n${result.tail.join('\n')}`, result.code);
    try {
      fs.renameSync(out, dir);
    } catch (err) {
      // Another build of the same source finished first; its outputs are the same.
      if (!fs.existsSync(binary)) throw err;
      fs.rmSync(out, { recursive: true, force: true });
    }
  } catch (err) {
    fs.rmSync(out, { recursive: true, force: true });
    throw err;
  }
  return { hash, dir, binary, cached: false, durationMs: Date.now() - started };
}

const MIRROR_LIST = '.ddbench-mirrored';
/** Work trees this process is building in, each with the build that holds it. */
const workTreeTurns = new Map<string, Promise<unknown>>();
const LOCK_POLL_MS = 500;

/**
 * Runs `fn` holding a work tree: builds in this process take turns, and a lock file
 * (`<work>.lock`, holding the builder's pid) keeps out builds of other processes. A lock
 * whose process is gone is taken over.
 */
async function withWorkTreeLock<T>(work: string, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  const before = workTreeTurns.get(work) ?? Promise.resolve();
  const turn = before.catch(() => {}).then(async () => {
    const lock = `${work}.lock`;
    fs.mkdirSync(path.dirname(work), { recursive: true });
    for (;;) {
      if (signal?.aborted) throw new UserError('the build was cancelled');
      try {
        fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const holder = Number(fs.readFileSync(lock, 'utf8').trim());
        if (!Number.isInteger(holder) || holder <= 0 || !isAlive(holder)) fs.rmSync(lock, { force: true });
        else await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
      }
    }
    try {
      return await fn();
    } finally {
      fs.rmSync(lock, { force: true });
    }
  });
  workTreeTurns.set(work, turn);
  try {
    return await turn;
  } finally {
    if (workTreeTurns.get(work) === turn) workTreeTurns.delete(work);
  }
}

/**
 * Makes `work` hold the files of `src`: a file whose content or executable bit differs is
 * rewritten (so it is newer than what was built from it, and make rebuilds that), a file
 * the previous mirror put there and `src` no longer has is deleted, and everything else
 * (the build's products, unchanged files and their times) is left alone.
 */
export function mirrorTree(src: string, work: string): void {
  fs.mkdirSync(work, { recursive: true });
  const listFile = path.join(work, MIRROR_LIST);
  const before = fs.existsSync(listFile) ? fs.readFileSync(listFile, 'utf8').split('\n').filter((l) => l !== '') : [];
  const now: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(src, rel), { withFileTypes: true })) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (childRel === MIRROR_LIST) continue;
      if (entry.isDirectory()) walk(childRel);
      else if (entry.isFile() || entry.isSymbolicLink()) now.push(childRel);
    }
  };
  walk('');
  // Listed before anything is copied, so files of a mirror cut short are still known as the source's next time.
  fs.writeFileSync(listFile, [...new Set([...before, ...now])].join('\n'));
  for (const rel of now) {
    const from = path.join(src, rel);
    const to = path.join(work, rel);
    const st = fs.lstatSync(from);
    const cur = fs.existsSync(to) || isLink(to) ? fs.lstatSync(to) : undefined;
    if (st.isSymbolicLink()) {
      const target = fs.readlinkSync(from);
      if (cur?.isSymbolicLink() && fs.readlinkSync(to) === target) continue;
      if (cur !== undefined) fs.rmSync(to, { recursive: true, force: true });
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.symlinkSync(target, to);
      continue;
    }
    if (cur?.isFile() && cur.size === st.size && (cur.mode & 0o111) === (st.mode & 0o111) && fs.readFileSync(to).equals(fs.readFileSync(from))) continue;
    if (cur !== undefined) fs.rmSync(to, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
    fs.chmodSync(to, st.mode & 0o777);
  }
  const keep = new Set(now);
  for (const rel of before) if (!keep.has(rel)) fs.rmSync(path.join(work, rel), { force: true });
  fs.writeFileSync(listFile, now.join('\n'));
}

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function run(command: string, args: string[], opts: BuildOptions): Promise<{ code: number | null; tail: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: {}, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const tail: string[] = [];
    const onLine = (line: string) => {
      tail.push(line);
      if (tail.length > OUTPUT_LINES) tail.shift();
      opts.onLine?.(line);
    };
    readLines(child.stdout, onLine);
    readLines(child.stderr, onLine);
    const kill = () => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    };
    const timer = setTimeout(() => {
      onLine(`(the build took longer than ${Math.round((opts.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 60_000)} min and was stopped)`);
      kill();
    }, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const onAbort = () => kill();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.signal?.aborted) reject(new UserError('the build was cancelled'));
      else resolve({ code, tail });
    });
  });
}
