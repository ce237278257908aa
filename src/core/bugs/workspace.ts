import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { UserError } from '../errors';
import { DDBENCH_DIR, packageRoot } from '../paths';
import { copyTree } from '../patch/tree';
import { applyUnifiedDiff, reverseUnifiedDiff } from '../patch/unified';
import { findBug, findBugSystem, findSystem, loadCatalog, type BugEntry, type Catalog, type SystemEntry } from './catalog';
import { readManifest } from './manifest';
import { upstreamMissing } from './upstream-installed';

/** What a workspace holds of its bug set: the source and the docs a user of the system would have. */
const SYSTEM_PARTS = ['src', 'README.md'];

/**
 * The node runtime's type declaration, so the editor completes `rt.` in the system's
 * code. It is the package's (the runtime is), whichever bug set is in use.
 */
const RUNTIME_TYPES = path.join('types', 'ddbench-runtime.d.ts');
/** Points the editor at the system's code and the runtime types; checks nothing unless a file has `// @ts-check`. */
const JSCONFIG = {
  compilerOptions: { allowJs: true, checkJs: false, module: 'ESNext', moduleResolution: 'Bundler', target: 'ES2022', lib: ['ES2022'], types: [] },
  include: ['src', 'types'],
};

const WorkspaceFile = z.strictObject({
  version: z.literal(1),
  bugId: z.string(),
  system: z.string(),
  createdAt: z.string(),
});

export interface WorkspaceInfo {
  dir: string;
  bugId: string;
  system: string;
  /** When `open` made it (ISO time). */
  createdAt: string;
}

export function workspaceFile(dir: string): string {
  return path.join(dir, DDBENCH_DIR, 'workspace.json');
}

/**
 * Materialises a bug workspace: the system's source with bug.patch applied, ISSUE.md,
 * for a miniature the runtime's types with a jsconfig.json, and `.ddbench/`. Nothing of the fix, the
 * reproducer or other bugs is copied.
 */
export async function openWorkspace(catalog: Catalog, bugId: string, destDir: string): Promise<string> {
  const bug = findBug(catalog, bugId);
  const system = findSystem(catalog, bug.system);
  const dest = path.resolve(destDir);
  if (fs.existsSync(dest) && fs.readdirSync(dest).length > 0) {
    throw new UserError(`${dest} is not empty; choose an empty or new folder (--dir)`);
  }
  // Built beside the target and renamed into place, so a failure (a bug.patch that does
  // not apply) leaves nothing: no half-made folder holding the correct source, no refused retry.
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  const temp = fs.mkdtempSync(path.join(path.dirname(dest), `.${path.basename(dest)}.opening-`));
  try {
    materialiseBuggySource(system, bug, temp);
    fs.copyFileSync(path.join(bug.dir, 'ISSUE.md'), path.join(temp, 'ISSUE.md'));
    // The runtime's types serve a miniature's JavaScript; a real system's Go tree has no use for them.
    if (system.kind === 'miniature') writeEditorSupport(temp);
    fs.mkdirSync(path.join(temp, DDBENCH_DIR, 'runs'), { recursive: true });
    fs.mkdirSync(path.join(temp, DDBENCH_DIR, 'records'), { recursive: true });
    const info: z.infer<typeof WorkspaceFile> = { version: 1, bugId: bug.id, system: system.id, createdAt: new Date().toISOString() };
    fs.writeFileSync(workspaceFile(temp), JSON.stringify(info, null, 2) + '\n');
    initGitRepository(temp, bug.id);
    if (fs.existsSync(dest)) fs.rmdirSync(dest); // empty, checked above
    fs.renameSync(temp, dest);
  } catch (err) {
    fs.rmSync(temp, { recursive: true, force: true });
    throw err;
  }
  return dest;
}

/**
 * Makes the workspace a git repository with one commit of the bug's code, so the
 * editor's Source Control shows "my changes". `ddbench diff` (against a fresh copy of
 * the bug's code) stays what verification checks. Without git on the machine the
 * workspace is still complete, only without history.
 */
function initGitRepository(dir: string, bugId: string): void {
  fs.writeFileSync(path.join(dir, '.gitignore'), `${DDBENCH_DIR}/\nnode_modules/\n`);
  const git = (...args: string[]) =>
    spawnSync('git', ['-c', 'user.name=DDBench', '-c', 'user.email=ddbench@localhost', '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', ...args], {
      cwd: dir,
      stdio: 'ignore',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' },
    });
  if (git('init', '-q').status !== 0) {
    fs.rmSync(path.join(dir, '.git'), { recursive: true, force: true });
    return;
  }
  const committed = git('add', '-A').status === 0 && git('commit', '-q', '--no-verify', '-m', `${bugId}: the bug's code as opened`).status === 0;
  if (!committed) fs.rmSync(path.join(dir, '.git'), { recursive: true, force: true });
}

/**
 * Puts the bug's code back in the workspace's source, after saving the current changes
 * as a patch under `.ddbench/` (so nothing is lost). Returns the saved patch's path, or
 * undefined when there were no changes.
 */
export function resetWorkspaceSource(ws: ResolvedWorkspace, changes: string): string | undefined {
  if (!changes.trim()) return undefined;
  const saved = path.join(ws.info.dir, DDBENCH_DIR, `changes-${new Date().toISOString().replace(/[:.]/g, '-')}.patch`);
  fs.writeFileSync(saved, changes);
  const fresh = fs.mkdtempSync(path.join(path.dirname(ws.info.dir), `.${path.basename(ws.info.dir)}.reset-`));
  try {
    materialiseBuggySource(ws.system, ws.bug, fresh);
    for (const part of SYSTEM_PARTS) {
      fs.rmSync(path.join(ws.info.dir, part), { recursive: true, force: true });
      if (fs.existsSync(path.join(fresh, part))) fs.renameSync(path.join(fresh, part), path.join(ws.info.dir, part));
    }
  } finally {
    fs.rmSync(fresh, { recursive: true, force: true });
  }
  return saved;
}

function writeEditorSupport(dest: string): void {
  fs.mkdirSync(path.join(dest, path.dirname(RUNTIME_TYPES)), { recursive: true });
  fs.copyFileSync(path.join(packageRoot(), 'bugs', RUNTIME_TYPES), path.join(dest, RUNTIME_TYPES));
  fs.writeFileSync(path.join(dest, 'jsconfig.json'), JSON.stringify(JSCONFIG, null, 2) + '\n');
}

/** Writes the system's parts with the bug applied into `dest` (also used to rebuild a pristine buggy copy). */
export function materialiseBuggySource(system: SystemEntry, bug: BugEntry, dest: string): void {
  copySystemParts(system, dest);
  applyUnifiedDiff(dest, bugPatchText(bug), path.join(bug.dir, 'bug.patch'));
}

/** The patch that turns the system's correct source into the buggy one (harness-side only: it is the reverse of the fix). */
export function bugPatchText(bug: BugEntry): string {
  return fs.readFileSync(path.join(bug.dir, 'bug.patch'), 'utf8');
}

/** The bug's reference fix: the reverse of its bug.patch. It never enters a workspace. */
export function referenceFix(bug: BugEntry): string {
  return reverseUnifiedDiff(bugPatchText(bug));
}

/**
 * Writes the system's correct parts into `dest`: a real upstream system's src/ is a copy
 * of its installed source tree, with its host program (if the system is a library) in it.
 */
export function copySystemParts(system: SystemEntry, dest: string): void {
  fs.mkdirSync(dest, { recursive: true });
  for (const part of SYSTEM_PARTS) {
    const src = part === 'src' && system.manifest.upstream !== undefined ? upstreamTree(system) : path.join(system.dir, part);
    if (!fs.existsSync(src)) continue;
    if (fs.statSync(src).isDirectory()) copyTree(src, path.join(dest, part), ['node_modules']);
    else fs.copyFileSync(src, path.join(dest, part));
  }
  const host = system.manifest.upstream?.host;
  if (host !== undefined) copyTree(path.join(system.dir, host.dir), path.join(dest, 'src', host.into));
}

function upstreamTree(system: SystemEntry): string {
  const missing = upstreamMissing(system);
  if (missing !== undefined) throw new UserError(missing);
  return system.manifest.upstream?.tree as string;
}

export async function readWorkspace(dir: string): Promise<WorkspaceInfo> {
  const abs = path.resolve(dir);
  const file = workspaceFile(abs);
  if (!fs.existsSync(file)) throw new UserError(`${abs} is not a DDBench workspace (no ${path.join(DDBENCH_DIR, 'workspace.json')}); create one with \`ddbench open <bug>\``);
  const w = await readManifest(file, WorkspaceFile);
  return { dir: abs, bugId: w.bugId, system: w.system, createdAt: w.createdAt };
}

/** Where new workspaces go unless a folder is given: `DDBENCH_WORKSPACES`, else ~/ddbench-workspaces. */
export function defaultWorkspacesDir(): string {
  return process.env.DDBENCH_WORKSPACES ? path.resolve(process.env.DDBENCH_WORKSPACES) : path.join(os.homedir(), 'ddbench-workspaces');
}

export function isWorkspace(dir: string): boolean {
  return fs.existsSync(workspaceFile(dir));
}

export interface ResolvedWorkspace {
  info: WorkspaceInfo;
  catalog: Catalog;
  bug: BugEntry;
  system: SystemEntry;
}

/** A workspace with its bug and system from the catalogue. */
export async function resolveWorkspace(dir: string, catalog?: Catalog): Promise<ResolvedWorkspace> {
  const info = await readWorkspace(dir);
  const cat = catalog ?? (await loadCatalog());
  const bug = findBug(cat, info.bugId);
  return { info, catalog: cat, bug, system: findBugSystem(cat, bug) };
}
