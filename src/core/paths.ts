import * as fs from 'node:fs';
import * as path from 'node:path';

/** The folder in a bug workspace that holds DDBench's own files: runs, records, the workspace marker. */
export const DDBENCH_DIR = '.ddbench';

let cachedRoot: string | undefined;

/**
 * The package root (where package.json names `ddbench`). Bundles live in dist/ and
 * sources in src/, so walk up from this file rather than assume a depth.
 */
export function packageRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = __dirname;
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) {
      const name = (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: unknown }).name;
      if (name === 'ddbench') return (cachedRoot = dir);
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find the ddbench package root above ${__dirname}`);
    dir = parent;
  }
}
