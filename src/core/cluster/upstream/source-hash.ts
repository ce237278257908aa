import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * A hash of a source tree: every regular file's relative path, mode's executable bit and
 * content, in sorted order. Symbolic links count by their target text. Two trees with the
 * same hash build the same binary, so it keys the build cache.
 */
export function hashTree(root: string): string {
  const hash = createHash('sha256');
  const walk = (rel: string): void => {
    const abs = path.join(root, rel);
    for (const entry of fs.readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const child = path.join(root, childRel);
      if (entry.isDirectory()) walk(childRel);
      else if (entry.isSymbolicLink()) hash.update(`l ${childRel}\0${fs.readlinkSync(child)}\0`);
      else if (entry.isFile()) {
        const exec = (fs.statSync(child).mode & 0o111) !== 0 ? 'x' : 'f';
        const content = fs.readFileSync(child);
        hash.update(`${exec} ${childRel}\0${content.length}\0`);
        hash.update(content);
      }
    }
  };
  walk('');
  return hash.digest('hex');
}
