import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** A throwaway folder; removed by `dispose`. */
export function tempDir(prefix: string): { dir: string; dispose(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, dispose: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(root, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
}

export const systemJson = {
  id: 'toy',
  name: 'Toy',
  description: 'a toy system',
  modelledAfter: { project: 'toy', url: 'https://example.org/toy' },
  entry: 'src/node.mjs',
  nodes: ['n1', 'n2'],
  config: {},
  tests: ['basic'],
};

export const bugJson = {
  id: 'toy-off-by-one',
  title: 'Counter is off by one',
  tier: 1,
  faults: [],
  categories: ['message-loss'],
  modelledAfter: {
    project: 'toy',
    id: 'toy#1',
    url: 'https://example.org/toy/1',
    fix: { ref: 'toy#2', url: 'https://example.org/toy/2', summary: 'adds one instead of two' },
    status: 'fixed',
    mechanism: 'inc adds two',
  },
  reproducer: { scenario: 'count', trials: 3 },
  regression: ['basic'],
  context: { capture: { maxEvents: 100, state: true }, notes: ['look at a', 'look at b', 'look at c'] },
  hints: ['look at inc', 'compare the counts', 'inc adds two'],
};

export const correctSource = 'export function inc(x) {\n  return x + 1;\n}\n\nexport const name = "toy";\n';
export const buggySource = 'export function inc(x) {\n  return x + 2;\n}\n\nexport const name = "toy";\n';

/** A valid one-system, one-bug set; `patch` is its bug.patch. */
export function writeToyBugSet(root: string, patch: string): void {
  writeFiles(root, {
    'toy/system.json': JSON.stringify(systemJson),
    'toy/src/node.mjs': correctSource,
    'toy/README.md': '# Toy\n',
    'toy/scenarios/basic.mjs': 'export default { name: "basic", description: "", timeoutMs: 1000, async run() {} };\n',
    'toy/scenarios/count.mjs': 'export default { name: "count", description: "", timeoutMs: 1000, async run() {} };\n',
    'toy/toy-off-by-one/bug.json': JSON.stringify(bugJson),
    'toy/toy-off-by-one/bug.patch': patch,
    'toy/toy-off-by-one/ISSUE.md': '# Counter jumps\n',
  });
}
