import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SystemEntry } from '../../bugs/catalog';
import type { UpstreamSpec } from '../../bugs/upstream-spec';
import { copySystemParts } from '../../bugs/workspace';
import { UserError } from '../../errors';
import { readLines } from '../../../runtime/ndjson';
import { buildUpstream, type UpstreamBuild } from './build';

/** What running real binaries needs besides each system's own packages: the sandbox and the run network's tools. */
const HARNESS_PACKAGES = ['bubblewrap', 'iproute2', 'iptables', 'util-linux'];
/** What `apt-get source` needs to unpack a source package. */
const APT_SOURCE_PACKAGES = ['dpkg-dev'];
/** The deb-src entries setup writes when the machine has none (the same suites as its deb entries). */
export const DEB_SRC_FILE = '/etc/apt/sources.list.d/ddbench-deb-src.sources';
const APT_DIR = '/etc/apt';
/** Archives whose entries get a deb-src twin (Debian's and Ubuntu's own, not third-party repositories). */
const ARCHIVE = /(^|[/.])(debian\.org|ubuntu\.com)(\/|$)/;

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
  for (const s of systems) {
    for (const p of s.manifest.upstream?.debian.packages ?? []) all.add(p);
    if (s.manifest.upstream?.debian.source.from === 'apt-source') for (const p of APT_SOURCE_PACKAGES) all.add(p);
  }
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
  if (systems.some((s) => s.manifest.upstream?.debian.source.from === 'apt-source') && !hasDebSrc(APT_DIR)) {
    const entries = debSrcEntries(APT_DIR);
    if (entries === undefined) throw new UserError(`apt-get source needs a deb-src entry, and there is no Debian or Ubuntu deb entry under ${APT_DIR} to make one from: add one yourself`);
    opts.onStep?.({ what: `adding deb-src entries for the same suites (${DEB_SRC_FILE}) and apt-get update` });
    fs.writeFileSync(DEB_SRC_FILE, entries);
    const update = await run('apt-get', ['update', '-q'], env, opts);
    if (update.code !== 0) throw new UserError(`apt-get update failed after adding ${DEB_SRC_FILE} (exit ${update.code}):\n${update.tail.join('\n')}`);
  }
  for (const system of systems) {
    const spec = system.manifest.upstream;
    if (spec === undefined) continue;
    const { package: pkg, version, from } = spec.debian.source;
    if (from === 'apt-source') {
      if (sourceTreeVersion(spec.tree) !== version) {
        opts.onStep?.({ system: system.id, what: `apt-get source ${pkg}=${version} into ${spec.tree}` });
        await fetchSource(pkg, version, spec.tree, env, opts);
      }
      const unpacked = sourceTreeVersion(spec.tree);
      if (unpacked !== version) throw new UserError(`${system.id}: ${spec.tree} holds ${pkg} ${unpacked ?? '(no debian/changelog)'}, but the bugs are written against ${version}`);
    } else {
      if (!fs.existsSync(spec.tree)) throw new UserError(`${system.id}: the source tree ${spec.tree} is missing after installing ${pkg}`);
      const installed = await installedVersion(pkg);
      if (installed !== version) throw new UserError(`${system.id}: ${pkg} ${installed ?? '(not installed)'} is installed, but the bugs are written against ${version}`);
    }
    if (opts.build === false) continue;
    opts.onStep?.({ system: system.id, what: `building ${system.id} ${spec.version} (cold builds take a minute or two)` });
    builds.push({ system: system.id, build: await buildCorrect(system, spec, opts) });
  }
  return { packages, builds };
}

/**
 * Builds the system's correct source, so the first trial of any of its bugs only
 * rebuilds what its patch changes: the source tree itself, or with a host program (a
 * library's) the tree and the host together, as a workspace holds them.
 */
async function buildCorrect(system: SystemEntry, spec: UpstreamSpec, opts: SetupOptions): Promise<UpstreamBuild> {
  const buildOpts = { signal: opts.signal, onLine: opts.onLine };
  if (spec.host === undefined) return buildUpstream(system.id, spec, spec.tree, buildOpts);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), `ddbench-${system.id}-`));
  try {
    copySystemParts(system, scratch);
    return await buildUpstream(system.id, spec, path.join(scratch, 'src'), buildOpts);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** Whether apt has any deb-src entry (one-line or deb822) under `aptDir`. */
export function hasDebSrc(aptDir: string): boolean {
  return aptSourceFiles(aptDir).some((f) => (f.endsWith('.sources') ? /^Types:.*\bdeb-src\b/m : /^\s*deb-src\s/m).test(fs.readFileSync(f, 'utf8')));
}

/**
 * deb-src entries (deb822) for the Debian and Ubuntu archives apt's deb entries under
 * `aptDir` name, with the same suites, components and keys; undefined when there are none.
 */
export function debSrcEntries(aptDir: string): string | undefined {
  const stanzas: string[] = [];
  for (const file of aptSourceFiles(aptDir)) {
    const text = fs.readFileSync(file, 'utf8');
    if (file.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const fields = new Map<string, string>();
        for (const line of stanza.split('\n')) {
          const m = /^([A-Za-z-]+):\s*(.*)$/.exec(line);
          if (m) fields.set((m[1] as string).toLowerCase(), (m[2] as string).trim());
        }
        const uris = fields.get('uris') ?? '';
        if (!(fields.get('types') ?? '').split(/\s+/).includes('deb') || !uris.split(/\s+/).some((u) => ARCHIVE.test(u.replace(/^[a-z+]+:\/\//, '')))) continue;
        if (fields.get('enabled') === 'no') continue;
        const keep = ['uris', 'suites', 'components', 'signed-by', 'architectures'].filter((k) => fields.has(k));
        const names: Record<string, string> = { uris: 'URIs', suites: 'Suites', components: 'Components', 'signed-by': 'Signed-By', architectures: 'Architectures' };
        stanzas.push(['Types: deb-src', ...keep.map((k) => `${names[k]}: ${fields.get(k)}`)].join('\n'));
      }
    } else {
      for (const line of text.split('\n')) {
        const m = /^\s*deb\s+((?:\[[^\]]*\]\s+)?)(\S+)\s+(\S+)\s*(.*)$/.exec(line);
        if (m && ARCHIVE.test((m[2] as string).replace(/^[a-z+]+:\/\//, ''))) {
          const opts = (m[1] as string).trim().replace(/^\[|\]$/g, '');
          const signed = /signed-by=(\S+)/.exec(opts);
          stanzas.push(['Types: deb-src', `URIs: ${m[2]}`, `Suites: ${m[3]}`, `Components: ${(m[4] as string).trim()}`, ...(signed ? [`Signed-By: ${signed[1]}`] : [])].join('\n'));
        }
      }
    }
  }
  if (stanzas.length === 0) return undefined;
  return `# Written by \`ddbench setup upstream\`: the source packages of the same suites (apt-get source).\n${stanzas.join('\n\n')}\n`;
}

function aptSourceFiles(aptDir: string): string[] {
  const files = [path.join(aptDir, 'sources.list')];
  const dir = path.join(aptDir, 'sources.list.d');
  if (fs.existsSync(dir)) for (const f of fs.readdirSync(dir).sort()) if (f.endsWith('.list') || f.endsWith('.sources')) files.push(path.join(dir, f));
  return files.filter((f) => fs.existsSync(f));
}

/** The Debian version of an unpacked source tree (the first line of debian/changelog), or undefined. */
export function sourceTreeVersion(tree: string): string | undefined {
  try {
    const first = fs.readFileSync(path.join(tree, 'debian', 'changelog'), 'utf8').split('\n', 1)[0] ?? '';
    return /^\S+ \(([^)\s]+)\)/.exec(first)?.[1];
  } catch {
    return undefined;
  }
}

/** `apt-get source pkg=version` in a scratch folder beside `tree`, then the unpacked tree moved to `tree` (replacing another version). */
async function fetchSource(pkg: string, version: string, tree: string, env: NodeJS.ProcessEnv, opts: Pick<SetupOptions, 'onLine' | 'signal'>): Promise<void> {
  fs.mkdirSync(path.dirname(tree), { recursive: true });
  const scratch = fs.mkdtempSync(path.join(path.dirname(tree), `.${path.basename(tree)}-`));
  try {
    const r = await run('apt-get', ['source', '-q', `${pkg}=${version}`], env, { ...opts, cwd: scratch });
    if (r.code !== 0) throw new UserError(`apt-get source ${pkg}=${version} failed (exit ${r.code}):\n${r.tail.join('\n')}`);
    const dirs = fs.readdirSync(scratch, { withFileTypes: true }).filter((d) => d.isDirectory());
    if (dirs.length !== 1) throw new UserError(`apt-get source ${pkg}=${version} unpacked ${dirs.length} folders, expected one`);
    fs.rmSync(tree, { recursive: true, force: true });
    fs.renameSync(path.join(scratch, (dirs[0] as fs.Dirent).name), tree);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** The installed version of a Debian package, or undefined. */
export async function installedVersion(pkg: string): Promise<string | undefined> {
  const r = await run('dpkg-query', ['-W', '-f=${Version}', pkg], process.env, {});
  return r.code === 0 ? r.tail.join('').trim() || undefined : undefined;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, opts: Pick<SetupOptions, 'onLine' | 'signal'> & { cwd?: string }): Promise<{ code: number | null; tail: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], signal: opts.signal, ...(opts.cwd !== undefined && { cwd: opts.cwd }) });
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
