import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../errors';

/** Folders that are never part of a system's code. */
const SKIPPED = new Set(['.ddbench', '.git', 'node_modules']);

/** Snapshots kept at most, newest first; older ones, and any past KEEP_MS, are removed when a new one is made. */
const KEEP_SNAPSHOTS = 32;
const KEEP_MS = 24 * 60 * 60 * 1000;

/** The user's own folder for DDBench's temporary files, mode 0700: another local user can neither read nor plant anything there. */
export function userTempDir(): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const dir = path.join(os.tmpdir(), `ddbench-${uid ?? os.userInfo().username}`);
  privateDir(dir);
  return dir;
}

/** Where simulation snapshots live: `<userTempDir>/sim`, mode 0700. */
export function simCacheDir(): string {
  const dir = path.join(userTempDir(), 'sim');
  privateDir(dir);
  return dir;
}

/** Makes `dir` (mode 0700) or checks that the one there is a real folder of this user's that nobody else can reach. */
function privateDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const st = fs.lstatSync(dir);
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) throw new UserError(`${dir} is not a folder of this user's: remove it, it may have been planted by someone else`);
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}

/** The regular files under `dir` (relative, sorted); undefined if it holds anything else (a link, a device). */
function listFiles(dir: string, rel = ''): string[] | undefined {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const name = rel === '' ? entry.name : path.join(rel, entry.name);
    if (entry.isDirectory()) {
      const inner = listFiles(dir, name);
      if (inner === undefined) return undefined;
      out.push(...inner);
    } else if (entry.isFile()) out.push(name);
    else if (!entry.isSymbolicLink()) return undefined;
  }
  return out.sort();
}

/** A regular file's bytes, never through a link (one swapped in after the listing is refused). */
function readRegular(file: string): Buffer {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  try {
    if (!fs.fstatSync(fd).isFile()) throw new UserError(`${file} is not a regular file`);
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

interface Tree {
  files: string[];
  contents: Buffer[];
  hash: string;
}

function hashTree(files: string[], contents: Buffer[]): string {
  const hash = createHash('sha256');
  files.forEach((file, i) => hash.update(`${file}\u0000${contents[i]!.length}\u0000`).update(contents[i]!));
  return hash.digest('hex').slice(0, 24);
}

/** The source folder's code: its regular files (links are neither followed nor copied) and their hash. */
function readTree(dir: string): Tree {
  const files = listFiles(dir, '') ?? [];
  const contents = files.map((file) => readRegular(path.join(dir, file)));
  return { files, contents, hash: hashTree(files, contents) };
}

/** Whether a cached snapshot still holds exactly the code its name says: only regular files, hashing to `hash`. */
function intact(dir: string, hash: string): boolean {
  try {
    const files = listFiles(dir, '');
    if (files === undefined) return false;
    return hashTree(files, files.map((file) => readRegular(path.join(dir, file)))) === hash;
  } catch {
    return false;
  }
}

function prune(cache: string, keep: string): void {
  const now = Date.now();
  const entries = fs
    .readdirSync(cache)
    .filter((name) => path.join(cache, name) !== keep)
    .map((name) => {
      const full = path.join(cache, name);
      try {
        return { full, mtime: fs.lstatSync(full).mtimeMs };
      } catch {
        return undefined;
      }
    })
    .filter((e) => e !== undefined)
    .sort((a, b) => b.mtime - a.mtime);
  entries.forEach((e, i) => {
    // Temporary copies of a concurrent run are young, and so kept.
    if (i >= KEEP_SNAPSHOTS - 1 || now - e.mtime > KEEP_MS) fs.rmSync(e.full, { recursive: true, force: true });
  });
}

/**
 * A copy of `sourceDir` in the user's simulation cache, in a folder named by its
 * content hash. Node caches ES modules by URL for the life of the process, so
 * importing the workspace itself again after an edit (in the editor's long-lived host)
 * would run the old code; a changed file gives a new folder and a fresh import. A
 * cached copy is used only if it still hashes to its name (else it is made again), so
 * an edited copy never stands in for the workspace.
 */
export function snapshotSource(sourceDir: string): string {
  const tree = readTree(sourceDir);
  const cache = simCacheDir();
  const dir = path.join(cache, tree.hash);
  if (fs.existsSync(dir)) {
    if (intact(dir, tree.hash)) {
      const now = new Date();
      fs.utimesSync(dir, now, now);
      return dir;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  // Written under a temporary name and renamed, so a concurrent run never imports a half-copied tree.
  const temp = fs.mkdtempSync(`${dir}.tmp-`);
  tree.files.forEach((file, i) => {
    fs.mkdirSync(path.dirname(path.join(temp, file)), { recursive: true });
    fs.writeFileSync(path.join(temp, file), tree.contents[i]!);
  });
  try {
    fs.renameSync(temp, dir);
  } catch {
    // Another process made the same snapshot first; it is checked like any cached one.
    fs.rmSync(temp, { recursive: true, force: true });
    if (!intact(dir, tree.hash)) throw new UserError(`${dir}: a snapshot of ${sourceDir} was changed while it was made; run again`);
  }
  prune(cache, dir);
  return dir;
}
