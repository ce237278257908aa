import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findSystem, loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { copySystemParts, materialiseBuggySource } from '../../src/core/bugs/workspace';
import { compareTrees, formatFinding, knipTrees, lintTree, type Finding } from '../support/leak-analysis';
import { tempDir } from '../support/bugset';

/**
 * Nothing in a bug's workspace may give its fix away: every bug's buggy tree is compared
 * with its fixed tree by ESLint (no-unused-vars), knip (unused files and exports) and AST
 * passes (message types handled but never sent, properties written but never read or only
 * logged). Anything the buggy tree has that the fixed tree does not is a leak.
 */
describe('bug workspaces leak nothing of the fix', function () {
  this.timeout(5 * 60_000);
  let catalog: Catalog;
  let work: ReturnType<typeof tempDir>;
  const leaks = new Map<string, Finding[]>();

  before(async () => {
    catalog = await loadCatalog();
    work = tempDir('ddbench-leaks-');
    const trees = new Map<string, { dir: string; entry: string }>();
    for (const bug of catalog.bugs) {
      const system = findSystem(catalog, bug.system);
      for (const version of ['buggy', 'fixed'] as const) {
        // The layout of bugs/ (bug/version/system/…, lib beside it) keeps the scenarios' imports resolving.
        const root = path.join(work.dir, bug.id, version);
        const dir = path.join(root, system.id);
        if (version === 'buggy') materialiseBuggySource(system, bug, dir);
        else copySystemParts(system, dir);
        fs.cpSync(path.join(system.dir, 'scenarios'), path.join(dir, 'scenarios'), { recursive: true });
        fs.cpSync(path.join(system.dir, '..', 'lib'), path.join(root, 'lib'), { recursive: true });
        trees.set(`${bug.id}/${version}`, { dir, entry: system.manifest.entry });
      }
    }
    const knip = await knipTrees(work.dir, trees);
    for (const bug of catalog.bugs) {
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

  it('no bug leaves behind what only its fix uses', () => {
    const lines = catalog.bugs.flatMap((bug) => {
      const keep = new Set(bug.manifest.keep.map((k) => k.name));
      return leaks.get(bug.id)!.filter((f) => !keep.has(f.name)).map((f) => formatFinding(bug.id, f));
    });
    assert.deepEqual(lines, []);
  });

  it('every kept name is one the check would otherwise report', () => {
    // A stale `keep` entry would hide a later leak of the same name.
    const stale = catalog.bugs.flatMap((bug) =>
      bug.manifest.keep.filter((k) => !leaks.get(bug.id)!.some((f) => f.name === k.name)).map((k) => `${bug.id}: ${k.name}`),
    );
    assert.deepEqual(stale, []);
  });
});
