import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SystemEntry } from '../../bugs/catalog';
import { UserError } from '../../errors';
import { readLines } from '../../../runtime/ndjson';
import { buildUpstream, type UpstreamBuild } from './build';

/** What running real binaries needs besides each system's own packages: the sandbox and the run network's tools. */
const HARNESS_PACKAGES = ['bubblewrap', 'iproute2', 'iptables', 'util-linux'];

export interface SetupStep {
  system?: string;
  what: string;
}

export interface SetupOptions {
  /** Also build each system's pristine source, so the first trial finds it cached. */
  build?: boolean;
  onStep?(step: SetupStep): void;
  onLine?(line: string): void;
  signal?: AbortSignal;
}

export interface SetupResult {
  packages: string[];
  builds: { system: string; build: UpstreamBuild }[];
}

/** The Debian packages the upstream systems and their harness need, sorted, each once. */
export function packagesFor(systems: readonly SystemEntry[]): string[] {
  const all = new Set(HARNESS_PACKAGES);
  for (const s of systems) for (const p of s.manifest.upstream?.debian.packages ?? []) all.add(p);
  return [...all].sort();
}

/**
 * Installs what the upstream systems need (their Debian source and toolchain packages,
 * bubblewrap, iproute2, iptables) with apt-get, checks each source tree is where its
 * manifest says, and builds it once so trials find the build cached.
 */
export async function setupUpstream(systems: readonly SystemEntry[], opts: SetupOptions = {}): Promise<SetupResult> {
  if (process.platform !== 'linux' || !fs.existsSync('/usr/bin/apt-get')) throw new UserError('the upstream systems come from Debian packages: `ddbench setup upstream` needs a Debian or Ubuntu machine with apt-get');
  const packages = packagesFor(systems);
  if (process.getuid?.() !== 0) throw new UserError(`installing packages needs root: run \`sudo ddbench setup upstream\`, or install them yourself (sudo apt-get install -y ${packages.join(' ')})`);
  opts.onStep?.({ what: `apt-get install ${packages.join(' ')}` });
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let install = await run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...packages], env, opts);
  if (install.code !== 0) {
    opts.onStep?.({ what: 'apt-get update (the package lists are stale)' });
    await run('apt-get', ['update', '-q'], env, opts);
    install = await run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...packages], env, opts);
    if (install.code !== 0) throw new UserError(`apt-get install failed (exit ${install.code}):\n${install.tail.join('\n')}`);
  }
  const builds: SetupResult['builds'] = [];
  for (const system of systems) {
    const spec = system.manifest.upstream;
    if (spec === undefined) continue;
    if (!fs.existsSync(spec.tree)) throw new UserError(`${system.id}: the source tree ${spec.tree} is missing after installing ${spec.debian.source.package}`);
    const installed = await installedVersion(spec.debian.source.package);
    if (installed !== spec.debian.source.version) {
      throw new UserError(`${system.id}: ${spec.debian.source.package} ${installed ?? '(not installed)'} is installed, but the bugs are written against ${spec.debian.source.version}`);
    }
    if (opts.build === false) continue;
    opts.onStep?.({ system: system.id, what: `building ${system.id} ${spec.version} (cold builds take a minute or two)` });
    builds.push({ system: system.id, build: await buildUpstream(system.id, spec, spec.tree, { signal: opts.signal, onLine: opts.onLine }) });
  }
  return { packages, builds };
}

/** The installed version of a Debian package, or undefined. */
export async function installedVersion(pkg: string): Promise<string | undefined> {
  const r = await run('dpkg-query', ['-W', '-f=${Version}', pkg], process.env, {});
  return r.code === 0 ? r.tail.join('').trim() || undefined : undefined;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, opts: Pick<SetupOptions, 'onLine' | 'signal'>): Promise<{ code: number | null; tail: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], signal: opts.signal });
    const tail: string[] = [];
    const take = (line: string) => {
      tail.push(line);
      if (tail.length > 40) tail.shift();
      opts.onLine?.(line);
    };
    readLines(child.stdout, take);
    readLines(child.stderr, take);
    child.once('error', (err) => reject(new UserError(`cannot run ${path.basename(command)}: ${err.message}`)));
    child.once('close', (code) => resolve({ code, tail }));
  });
}
