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
    const args = ['--unshare-all', '--die-with-parent', '--cap-drop', 'ALL', '--clearenv', ...system.args, '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp'];
    args.push('--tmpfs', BUILD_ROOT, '--ro-bind', fs.realpathSync(srcDir), src, '--bind', out, OUT);
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
