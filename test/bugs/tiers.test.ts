import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findSystem, loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { materialiseBuggySource } from '../../src/core/bugs/workspace';
import { faultProblems, measureFaults } from '../../src/core/verify/faults';

/**
 * Every bug's tier and fault profile are what its failing run shows: the faults the
 * first failing simulated seed of its reproducer injects on the buggy code.
 */
describe('bug set: tiers follow from the faults of a failing run', function () {
  this.timeout(120_000);
  let catalog: Catalog;
  before(async () => {
    catalog = await loadCatalog();
  });

  it('every bug declares the faults and tier its failing run gives', async () => {
    const problems: string[] = [];
    // Measured in simulation, so the miniatures; a pilot bug's faults are checked on its live trial (upstream-validate.test.ts).
    for (const bug of catalog.bugs.filter((b) => b.kind === 'miniature')) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-tiers-'));
      try {
        const system = findSystem(catalog, bug.system);
        materialiseBuggySource(system, bug, dir);
        const measured = await measureFaults(system, bug, dir);
        if (measured === undefined) problems.push(`${bug.id}: no simulated seed fails`);
        problems.push(...faultProblems(bug, measured).map((p) => `${bug.id}: ${p}`));
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    assert.deepEqual(problems, []);
  });
});
