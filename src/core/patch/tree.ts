import * as fs from 'node:fs';
import * as path from 'node:path';

/** Relative paths (with `/`) of every file under `dir`, skipping names in `exclude` at any depth. */
export function listFiles(dir: string, exclude: readonly string[] = []): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const d of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      if (exclude.includes(d.name)) continue;
      const child = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) walk(child);
      else if (d.isFile()) out.push(child);
    }
  };
  if (fs.existsSync(dir)) walk('');
  return out.sort();
}

/** A symbolic link a copy left out, because it points outside the tree copied. */
export interface SkippedLink {
  /** Relative to the tree, with `/`. */
  path: string;
  target: string;
}

/**
 * Copies a folder (a scratch copy for a trial, a patch check or the agent), skipping
 * excluded names. Symbolic links are never followed: a link whose target lies inside
 * the tree is copied as a relative link (so it points inside the copy); a link pointing
 * outside, or dangling outside, is left out and returned, for the caller to report.
 * Sockets, FIFOs and devices are left out.
 */
export function copyTree(src: string, dest: string, exclude: readonly string[] = []): SkippedLink[] {
  const root = path.resolve(src);
  const realRoot = fs.realpathSync(root);
  const skipped: SkippedLink[] = [];
  const walk = (rel: string): void => {
    fs.mkdirSync(path.join(dest, rel), { recursive: true });
    for (const d of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      if (exclude.includes(d.name)) continue;
      const child = rel ? `${rel}/${d.name}` : d.name;
      const from = path.join(root, child);
      if (d.isDirectory()) walk(child);
      else if (d.isFile()) fs.copyFileSync(from, path.join(dest, child));
      else if (d.isSymbolicLink()) {
        const target = fs.readlinkSync(from);
        const inside = linkTargetInside(from, target, root, realRoot);
        if (inside === undefined) skipped.push({ path: child, target });
        else fs.symlinkSync(path.relative(path.dirname(from), inside) || '.', path.join(dest, child));
      }
    }
  };
  walk('');
  return skipped;
}

/** The absolute target of the link at `link` if it stays inside `root` (as written and once resolved), else undefined. */
function linkTargetInside(link: string, target: string, root: string, realRoot: string): string | undefined {
  const abs = path.resolve(path.dirname(link), target);
  if (!isWithin(abs, root)) return undefined;
  // A dangling target is judged by its nearest existing folder: creating it must stay inside too.
  let existing = abs;
  while (!fs.existsSync(existing)) existing = path.dirname(existing);
  return isWithin(fs.realpathSync(existing), realRoot) ? abs : undefined;
}

function isWithin(p: string, root: string): boolean {
  return p === root || p.startsWith(root + path.sep);
}
