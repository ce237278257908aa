import * as fs from 'node:fs';
import * as path from 'node:path';
import { UserError } from '../errors';
import { packageRoot } from '../paths';
import { BugManifest, difficultyOf, readManifest, SystemManifest, type Difficulty, type Tier, type Upstream } from './manifest';

/**
 * A miniature: our small re-creation, live and simulated. `upstream`: the real code of the
 * upstream project, built from Debian's sources, live only (the pilot tier, under `upstream/`).
 */
export const BUG_KINDS = ['miniature', 'upstream'] as const;
export type BugKind = (typeof BUG_KINDS)[number];

export interface SystemEntry {
  id: string;
  kind: BugKind;
  dir: string;
  manifest: SystemManifest;
}

export interface BugEntry {
  id: string;
  kind: BugKind;
  title: string;
  system: string;
  tier: Tier;
  difficulty: Difficulty;
  categories: string[];
  modelledAfter: Upstream;
  dir: string;
  manifest: BugManifest;
}

export interface Catalog {
  root: string;
  systems: SystemEntry[];
  bugs: BugEntry[];
  /** Manifests that could not be loaded, each naming its file and fields; the rest still load. */
  problems: string[];
}

/** The bug set: `DDBENCH_BUGS` when set, else the package's own `bugs/`. */
export function defaultBugsDir(): string {
  return process.env.DDBENCH_BUGS ? path.resolve(process.env.DDBENCH_BUGS) : path.join(packageRoot(), 'bugs');
}

/** A miniature system's module (relative to its folder); a real upstream system has none and runs live only. */
export function miniatureEntry(manifest: SystemManifest): string {
  if (manifest.entry === undefined) throw new UserError(`${manifest.id} is a real upstream system: it runs live only (no simulation, no Node.js module)`);
  return manifest.entry;
}

export function scenarioFile(system: SystemEntry, name: string): string {
  return path.join(system.dir, 'scenarios', `${name}.mjs`);
}

/** The folder under a bug set that holds its real upstream systems (bug kind `upstream`). */
export const UPSTREAM_DIR = 'upstream';

/**
 * The bug set: the miniature systems (`<root>/<system>/`) and the real upstream ones
 * (`<root>/upstream/<system>/`), each with its bugs in folders of their own.
 */
export async function loadCatalog(root: string = defaultBugsDir()): Promise<Catalog> {
  if (!fs.existsSync(root)) throw new UserError(`bug set not found at ${root}; set DDBENCH_BUGS to a bug-set folder`);
  const catalog: Catalog = { root, systems: [], bugs: [], problems: [] };
  const upstreamRoot = path.join(root, UPSTREAM_DIR);
  const folders = [
    ...subdirs(root).filter((n) => n !== UPSTREAM_DIR).map((n) => ({ dir: path.join(root, n), kind: 'miniature' as const })),
    ...(fs.existsSync(upstreamRoot) ? subdirs(upstreamRoot).map((n) => ({ dir: path.join(upstreamRoot, n), kind: 'upstream' as const })) : []),
  ];
  for (const { dir: sysDir, kind } of folders) {
    const sysFile = path.join(sysDir, 'system.json');
    if (!fs.existsSync(sysFile)) continue;
    let system: SystemEntry;
    try {
      system = await loadSystem(sysDir, sysFile, kind);
    } catch (err) {
      catalog.problems.push(messageOf(err));
      continue;
    }
    catalog.systems.push(system);
    for (const bugName of subdirs(sysDir)) {
      const bugFile = path.join(sysDir, bugName, 'bug.json');
      if (!fs.existsSync(bugFile)) continue;
      try {
        catalog.bugs.push(await loadBug(system, path.join(sysDir, bugName), bugFile));
      } catch (err) {
        catalog.problems.push(messageOf(err));
      }
    }
  }
  const seen = new Set<string>();
  for (const b of catalog.bugs) {
    if (seen.has(b.id)) catalog.problems.push(`${path.join(b.dir, 'bug.json')}: id: "${b.id}" is used by another bug`);
    seen.add(b.id);
  }
  const starters = catalog.bugs.filter((b) => b.manifest.starter);
  if (starters.length > 1) catalog.problems.push(`starter: ${starters.map((b) => b.id).join(', ')} are all marked as the starter bug; a set has one`);
  for (const b of starters) if (b.tier !== 1 || b.kind !== 'miniature') catalog.problems.push(`${path.join(b.dir, 'bug.json')}: starter: the starter bug is a miniature of tier 1 (this one is ${b.kind === 'upstream' ? 'real upstream code' : `tier ${b.tier}`})`);
  return catalog;
}

async function loadSystem(sysDir: string, sysFile: string, kind: BugKind): Promise<SystemEntry> {
  const name = path.basename(sysDir);
  const manifest = await readManifest(sysFile, SystemManifest);
  if (manifest.id !== name) throw new UserError(`${sysFile}: id: "${manifest.id}" must equal its folder name "${name}"`);
  if (kind === 'upstream' && manifest.upstream === undefined) throw new UserError(`${sysFile}: upstream: a system under ${UPSTREAM_DIR}/ is a real upstream system and needs this field`);
  if (kind === 'miniature' && manifest.upstream !== undefined) throw new UserError(`${sysFile}: upstream: a real upstream system belongs under ${UPSTREAM_DIR}/`);
  const system: SystemEntry = { id: manifest.id, kind, dir: sysDir, manifest };
  for (const t of manifest.tests) requireFile(scenarioFile(system, t), sysFile, `tests: scenario "${t}"`);
  if (manifest.entry !== undefined) requireFile(path.join(sysDir, manifest.entry), sysFile, 'entry');
  return system;
}

async function loadBug(system: SystemEntry, dir: string, file: string): Promise<BugEntry> {
  const m = await readManifest(file, BugManifest);
  if (m.id !== path.basename(dir)) throw new UserError(`${file}: id: "${m.id}" must equal its folder name "${path.basename(dir)}"`);
  requireFile(scenarioFile(system, m.reproducer.scenario), file, `reproducer.scenario "${m.reproducer.scenario}"`);
  for (const r of m.regression) {
    if (!system.manifest.tests.includes(r)) throw new UserError(`${file}: regression: "${r}" is not one of ${system.id}'s tests (${system.manifest.tests.join(', ')})`);
  }
  if (m.upstream !== undefined && system.manifest.upstream === undefined) throw new UserError(`${file}: upstream: node flags are for a bug of a real upstream system; ${system.id} is a miniature`);
  requireFile(path.join(dir, 'bug.patch'), file, 'bug.patch');
  requireFile(path.join(dir, 'ISSUE.md'), file, 'ISSUE.md');
  return {
    id: m.id,
    kind: system.kind,
    title: m.title,
    system: system.id,
    tier: m.tier,
    difficulty: difficultyOf(m.tier),
    categories: m.categories,
    modelledAfter: m.modelledAfter,
    dir,
    manifest: m,
  };
}

export function findBug(catalog: Catalog, id: string): BugEntry {
  const bug = catalog.bugs.find((b) => b.id === id);
  if (!bug) {
    const broken = brokenManifestOf(catalog, id);
    if (broken) throw new UserError(`bug "${id}" could not be loaded; fix its manifest: ${broken}`);
    const known = catalog.bugs.map((b) => b.id).join(', ') || '(none)';
    throw new UserError(`no bug "${id}" in ${catalog.root}; known bugs: ${known}`);
  }
  return bug;
}

/** The load problem of bug `id`'s own manifest or its system's, when its folder is there but did not load. */
function brokenManifestOf(catalog: Catalog, id: string): string | undefined {
  if (!/^[\w.-]+$/.test(id)) return undefined;
  const upstreamRoot = path.join(catalog.root, UPSTREAM_DIR);
  const systemDirs = [...subdirs(catalog.root).map((n) => path.join(catalog.root, n)), ...(fs.existsSync(upstreamRoot) ? subdirs(upstreamRoot).map((n) => path.join(upstreamRoot, n)) : [])];
  for (const sysDir of systemDirs) {
    const bugFile = path.join(sysDir, id, 'bug.json');
    if (!fs.existsSync(bugFile)) continue;
    const sysFile = path.join(sysDir, 'system.json');
    const problem = catalog.problems.find((p) => p.startsWith(`${bugFile}:`) || p.startsWith(`${sysFile}:`));
    if (problem) return problem;
  }
  return undefined;
}

export function findSystem(catalog: Catalog, id: string): SystemEntry {
  const sys = catalog.systems.find((s) => s.id === id);
  if (!sys) throw new UserError(`no system "${id}" in ${catalog.root}`);
  return sys;
}

/**
 * The system as `bug` runs it: a bug of a real upstream system may add node flags
 * (bug.json `upstream.args`) to its node command line. Every path that starts the bug's
 * cluster (repro, verify, validate, its regression checks, `ddbench up`) takes its system from here.
 */
export function bugSystem(system: SystemEntry, bug: BugEntry): SystemEntry {
  const extra = bug.manifest.upstream?.args;
  const up = system.manifest.upstream;
  if (extra === undefined || up === undefined) return system;
  return { ...system, manifest: { ...system.manifest, upstream: { ...up, node: { ...up.node, args: [...up.node.args, ...extra] } } } };
}

/** `bug`'s system from the catalogue, as the bug runs it (bugSystem). */
export function findBugSystem(catalog: Catalog, bug: BugEntry): SystemEntry {
  return bugSystem(findSystem(catalog, bug.system), bug);
}

function requireFile(file: string, manifest: string, field: string): void {
  if (!fs.existsSync(file)) throw new UserError(`${manifest}: ${field}: ${file} does not exist`);
}

function subdirs(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
    .map((d) => d.name)
    .sort();
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
