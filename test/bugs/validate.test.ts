import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { validateBug } from '../../src/core/repro/verify';
import { liveHostProcesses } from '../helpers/processes';

/**
 * Every bug of the set, validated for real: the reproducer fails on the buggy code in at
 * least 90% of seeded live trials and passes on the reference fix in all of them, and the
 * regression checks pass on both.
 */
describe('bug set validation', function () {
  this.timeout(15 * 60_000);
  let catalog: Catalog;

  before(async () => {
    catalog = await loadCatalog();
  });

  it('loads without manifest problems and has bugs of every tier', () => {
    assert.deepEqual(catalog.problems, []);
    for (const tier of [1, 2, 3]) assert.ok(catalog.bugs.some((b) => b.tier === tier), `no tier-${tier} bug`);
  });

  it('validates every bug', async () => {
    const runs = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-validate-'));
    try {
      const failures: string[] = [];
      for (const bug of catalog.bugs) {
        const r = await validateBug(catalog, bug, { keepRuns: runs });
        console.log(`      ${bug.id}: buggy fails ${r.buggy.failed}/${r.buggy.trials.length}, fixed passes ${r.fixed.passed}/${r.fixed.trials.length}`);
        if (!r.ok) failures.push(`${bug.id}: ${r.problems.join('; ')}`);
      }
      assert.deepEqual(failures, []);
      assert.deepEqual(liveHostProcesses(runs), [], 'node processes left behind');
    } finally {
      fs.rmSync(runs, { recursive: true, force: true });
    }
  });
});
