import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findSystem, loadCatalog, miniatureEntry, type BugEntry } from '../../src/core/bugs/catalog';
import { copySystemParts, materialiseBuggySource } from '../../src/core/bugs/workspace';
import { compareTrees, formatFinding, knipTrees, lintTree, type Finding } from '../support/leak-analysis';
import { tempDir, writeFiles } from '../support/bugset';

/**
 * Nothing in a bug's workspace may give its fix away: every bug's buggy tree is compared
 * with its fixed tree by ESLint (no-unused-vars), knip (unused files and exports) and AST
 * passes (message types handled but never sent, properties written but never read or only
 * logged). Anything the buggy tree has that the fixed tree does not is a leak.
 */
describe('bug workspaces leak nothing of the fix', function () {
  this.timeout(5 * 60_000);
  // The miniatures: JavaScript that ESLint and knip read. A real upstream system's Go code is beyond them.
  let bugs: BugEntry[];
  let work: ReturnType<typeof tempDir>;
  const leaks = new Map<string, Finding[]>();

  before(async () => {
    const catalog = await loadCatalog();
    bugs = catalog.bugs.filter((b) => b.kind === 'miniature');
    work = tempDir('ddbench-leaks-');
    const trees = new Map<string, { dir: string; entry: string }>();
    for (const bug of bugs) {
      const system = findSystem(catalog, bug.system);
      for (const version of ['buggy', 'fixed'] as const) {
        // The layout of bugs/ (bug/version/system/…, lib beside it) keeps the scenarios' imports resolving.
        const root = path.join(work.dir, bug.id, version);
        const dir = path.join(root, system.id);
        if (version === 'buggy') materialiseBuggySource(system, bug, dir);
        else copySystemParts(system, dir);
        fs.cpSync(path.join(system.dir, 'scenarios'), path.join(dir, 'scenarios'), { recursive: true });
        fs.cpSync(path.join(system.dir, '..', 'lib'), path.join(root, 'lib'), { recursive: true });
        trees.set(`${bug.id}/${version}`, { dir, entry: miniatureEntry(system.manifest) });
      }
    }
    const knip = await knipTrees(work.dir, trees);
    for (const bug of bugs) {
      const [buggy, fixed] = (['buggy', 'fixed'] as const).map((version) => {
        const name = `${bug.id}/${version}`;
        const facts = lintTree(trees.get(name)!.dir);
        facts.findings.push(...knip.get(name)!);
        return facts;
      });
      leaks.set(bug.id, compareTrees(buggy, fixed));
    }
  });

  after(() => work?.dispose());

  it('finds the bugs', () => assert.ok(leaks.size >= 30, `${leaks.size} bugs`));

  it('reports each kind of leak it looks for', async () => {
    // A fixed tree and a buggy one that keeps, unused, everything the fix uses.
    const toy = tempDir('ddbench-leaks-toy-');
    try {
      const node = (fixed: boolean): string =>
        [
          "import { helper } from './util.js';",
          'export function createNode(rt) {',
          '  const state = { term: 0 };',
          '  rt.exposeState(() => state);',
          '  rt.onMessage(({ from, type, body }) => {',
          '    switch (type) {',
          "      case 'Probe':",
          fixed ? "        return rt.send(from, 'ProbeResp', { ok: body.at >= state.term });" : "        return rt.send(from, 'ProbeResp', { ok: true });",
          "      case 'Catchup':",
          '        return helper(rt, body);',
          '    }',
          '  });',
          fixed ? "  return { start() { for (const n of rt.nodes) rt.send(n, 'Catchup', { lag: 0 }); } };" : "  return { start() { rt.log.info('started', { term: state.term }); } };",
          '}',
          '',
        ].join('\n');
      const util = (fixed: boolean): string =>
        [
          'export function helper(rt, body) {',
          fixed ? '  const lag = body.lag;\n  rt.log.info("catch up", { lag });\n  return lag;' : '  const lag = body.lag;\n  rt.log.info("catch up", { lag });',
          '}',
          'export function gen(rt, generation) {',
          fixed ? '  return generation > 0 ? rt.id : null;' : '  return rt.id;',
          '}',
          fixed ? '' : 'export const UNUSED = 1;',
          '',
        ].join('\n');
      const trees = new Map<string, { dir: string; entry: string }>();
      for (const fixed of [false, true]) {
        const dir = path.join(toy.dir, fixed ? 'fixed' : 'buggy');
        writeFiles(dir, { 'src/node.js': node(fixed), 'src/util.js': util(fixed) + 'export const users = [gen];\n', 'scenarios/basic.mjs': "import { users } from '../src/util.js';\nexport default users;\n" });
        // The fixed tree uses the epoch cache; the buggy one keeps its file.
        writeFiles(dir, { 'src/epochs.js': 'export const epochs = [];\n', ...(fixed ? { 'src/node.js': node(fixed) + "export { epochs } from './epochs.js';\n" } : {}) });
        trees.set(fixed ? 'fixed' : 'buggy', { dir, entry: 'src/node.js' });
      }
      const knip = await knipTrees(toy.dir, trees);
      const [buggy, fixed] = ['buggy', 'fixed'].map((name) => {
        const facts = lintTree(trees.get(name)!.dir);
        facts.findings.push(...knip.get(name)!);
        return facts;
      });
      const found = compareTrees(buggy, fixed).map((f) => `${f.check} ${f.name}`).sort();
      assert.deepEqual(found, ['field term', 'knip-exports UNUSED', 'knip-files epochs.js', 'logged-only lag', 'message-type Catchup', 'no-unused-vars generation']);
    } finally {
      toy.dispose();
    }
  });

  it('no bug leaves behind what only its fix uses', () => {
    const lines = bugs.flatMap((bug) => {
      const keep = new Set(bug.manifest.keep.map((k) => k.name));
      return leaks.get(bug.id)!.filter((f) => !keep.has(f.name)).map((f) => formatFinding(bug.id, f));
    });
    assert.deepEqual(lines, []);
  });

  it('every kept name is one the check would otherwise report', () => {
    // A stale `keep` entry would hide a later leak of the same name.
    const stale = bugs.flatMap((bug) =>
      bug.manifest.keep.filter((k) => !leaks.get(bug.id)!.some((f) => f.name === k.name)).map((k) => `${bug.id}: ${k.name}`),
    );
    assert.deepEqual(stale, []);
  });
});
