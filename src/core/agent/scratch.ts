import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BugEntry, SystemEntry } from '../bugs/catalog';
import { materialiseBuggySource } from '../bugs/workspace';
import { echo } from '../echo';
import { DDBENCH_DIR } from '../paths';
import { makeTempDir, type TempDir } from '../temp-dirs';
import { copyTree, listFiles, type SkippedLink } from '../patch/tree';
import { diffTrees } from '../patch/unified';

/** A problem with a tool call; its message goes back to the model, which can correct it. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}

/** Names the agent never sees: run records (they hold evidence and verdicts of other runs) and VCS internals. */
const HIDDEN = new Set([DDBENCH_DIR, '.git', 'node_modules']);
/** The only folder whose changes make up a fix (verifyFix applies patches to the system's source). */
export const EDITABLE_ROOT = 'src';

/**
 * The agent's private copy of a bug workspace. Its tools read and write only here,
 * never the user's workspace; the fix is the diff between this copy and a pristine
 * copy of the bug's code, so it can be verified and offered to the user for review.
 */
export class AgentScratch {
  private readonly realRoot: string;

  private constructor(
    private readonly parent: TempDir,
    readonly root: string,
    private readonly base: string,
    /** Links of the workspace that point outside it, left out of the copy. */
    readonly skippedLinks: readonly SkippedLink[],
  ) {
    this.realRoot = fs.realpathSync(root);
  }

  /** `startFrom` 'bug' puts the bug's own code in the copy's src/, whatever the person has edited; 'workspace' keeps their edits. */
  static create(workspaceDir: string, system: SystemEntry, bug: BugEntry, startFrom: 'bug' | 'workspace' = 'bug'): AgentScratch {
    const parent = makeTempDir('ddbench-agent-');
    const work = path.join(parent.dir, 'work');
    const base = path.join(parent.dir, 'base');
    const skipped = copyTree(workspaceDir, work, [...HIDDEN]);
    materialiseBuggySource(system, bug, base);
    if (startFrom === 'bug') {
      fs.rmSync(path.join(work, EDITABLE_ROOT), { recursive: true, force: true });
      copyTree(path.join(base, EDITABLE_ROOT), path.join(work, EDITABLE_ROOT));
    }
    return new AgentScratch(parent, work, base, skipped);
  }

  /**
   * The absolute path of a repository-relative path, refusing anything that could
   * leave the copy: absolute paths, `..`, hidden folders, and symlinks pointing out.
   */
  resolve(rel: string): string {
    const clean = rel.trim().replace(/\\/g, '/').replace(/^\.\/+/, '');
    if (clean === '' || clean === '.') return this.root;
    if (path.isAbsolute(clean) || /^[a-zA-Z]:/.test(clean)) throw new ToolError(`${echo(rel)}: give a path relative to the repository root, such as src/server.js`);
    const parts = clean.split('/').filter((p) => p !== '' && p !== '.');
    if (parts.includes('..')) throw new ToolError(`${echo(rel)}: ".." is not allowed; paths stay inside the repository`);
    if (parts.some((p) => HIDDEN.has(p))) throw new ToolError(`${echo(rel)}: not part of the repository`);
    const link = this.skippedLinks.find((l) => parts.join('/') === l.path || parts.join('/').startsWith(`${l.path}/`));
    if (link) throw new ToolError(`${echo(rel)}: points outside the repository (${link.path} is a symbolic link to ${link.target}, left out of this copy)`);
    const abs = path.join(this.root, ...parts);
    const real = realpathOfExisting(abs);
    if (real !== this.realRoot && !real.startsWith(this.realRoot + path.sep)) throw new ToolError(`${echo(rel)}: points outside the repository`);
    return abs;
  }

  /** Repository-relative paths of the files under `rel`, hidden names left out. */
  files(rel = ''): string[] {
    const abs = this.resolve(rel);
    if (!fs.existsSync(abs)) throw new ToolError(`${echo(rel)}: no such file or folder`);
    if (fs.statSync(abs).isFile()) return [this.relative(abs)];
    return listFiles(abs, [...HIDDEN]).map((f) => this.relative(path.join(abs, f)));
  }

  read(rel: string): string {
    const abs = this.resolve(rel);
    if (!fs.existsSync(abs)) throw new ToolError(`${echo(rel)}: no such file${this.suggest(rel)}`);
    if (fs.statSync(abs).isDirectory()) throw new ToolError(`${echo(rel)}: is a folder; use list_files`);
    return fs.readFileSync(abs, 'utf8');
  }

  exists(rel: string): boolean {
    return fs.existsSync(this.resolve(rel));
  }

  write(rel: string, content: string): void {
    const abs = this.resolve(rel);
    const relative = this.relative(abs);
    if (!relative.startsWith(`${EDITABLE_ROOT}/`)) throw new ToolError(`${echo(rel)}: only files under ${EDITABLE_ROOT}/ make up the system; edits elsewhere would not be verified`);
    this.refuseLinks(rel, relative);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    // O_NOFOLLOW: the last component is checked by the kernel too, not only by refuseLinks.
    const fd = fs.openSync(abs, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o644);
    try {
      fs.writeFileSync(fd, content);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Writes never go through a symbolic link, even one pointing inside: each existing component of the path is checked. */
  private refuseLinks(rel: string, relative: string): void {
    let at = this.root;
    for (const part of relative.split('/')) {
      at = path.join(at, part);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(at);
      } catch {
        return; // the rest does not exist yet and is created as plain folders and a file
      }
      if (st.isSymbolicLink()) throw new ToolError(`${echo(rel)}: ${this.relative(at)} is a symbolic link; edits never write through links, so edit the file it points to`);
    }
  }

  /** The agent's changes to the bug's original code, as a unified diff ('' when none). */
  diff(): string {
    return diffTrees(this.base, this.root, [EDITABLE_ROOT], [...HIDDEN]);
  }

  /** Current text of each file `diff()` names, null for a deleted one. */
  contents(files: readonly string[]): { path: string; after: string | null }[] {
    return files.map((f) => {
      const abs = path.join(this.root, f);
      return { path: f, after: fs.existsSync(abs) ? fs.readFileSync(abs, 'utf8') : null };
    });
  }

  dispose(): void {
    this.parent.remove();
  }

  private relative(abs: string): string {
    return path.relative(this.root, abs).split(path.sep).join('/');
  }

  private suggest(rel: string): string {
    const name = path.basename(rel);
    const near = listFiles(this.root, [...HIDDEN]).filter((f) => path.basename(f) === name);
    return near.length ? ` (did you mean ${near.slice(0, 3).join(', ')}?)` : '; list_files shows what exists';
  }
}

/** realpath of `p`, or of its nearest existing ancestor joined with the rest (for files about to be created). */
function realpathOfExisting(p: string): string {
  let dir = p;
  const rest: string[] = [];
  while (!fs.existsSync(dir)) {
    rest.unshift(path.basename(dir));
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return path.join(fs.realpathSync(dir), ...rest);
}
