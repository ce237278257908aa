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

/** Copies a folder (a scratch copy for a trial or a patch check), skipping excluded names. */
export function copyTree(src: string, dest: string, exclude: readonly string[] = []): void {
  fs.mkdirSync(dest, { recursive: true });
  fs.cpSync(src, dest, {
    recursive: true,
    filter: (p) => !exclude.includes(path.basename(p)) || p === src,
  });
}
