import fs from 'node:fs';
import path from 'node:path';

/** A relative module specifier in a static import, an export-from or a dynamic import of a literal. */
const RELATIVE_IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*(['"])(\.{1,2}\/[^'"\n]+)\1/g;

/**
 * The scenario module and every file it imports by relative path, transitively: what
 * a sandboxed simulation must see of the bug set to run the scenario (its client
 * library, the shared scenario helpers), and nothing more.
 */
export function scenarioFiles(scenarioPath: string): string[] {
  const seen = new Set<string>();
  const queue = [path.resolve(scenarioPath)];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file) || !fs.existsSync(file)) continue;
    seen.add(file);
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(RELATIVE_IMPORT)) queue.push(path.resolve(path.dirname(file), m[2]!));
  }
  return [...seen].sort();
}
