import assert from 'node:assert/strict';
import { findSystem, loadCatalog, type Catalog, type SystemEntry } from '../../src/core/bugs/catalog';
import { materialiseBuggySource } from '../../src/core/bugs/workspace';
import { eventsDigest } from '../../src/core/sim/events-file';
import { searchSeeds } from '../../src/core/sim/seeds';
import { runSimTrial } from '../../src/core/sim/sim-trial';
import { prepareTarget } from '../../src/core/sim/target';
import { tempDir } from '../support/bugset';

/** The bug set's first system under simulation: its own tests pass, every bug reproduces, every fix holds. */
describe('simulation: raftkv', function () {
  this.timeout(10 * 60_000);
  let catalog: Catalog;
  let raftkv: SystemEntry;

  before(async () => {
    catalog = await loadCatalog();
    raftkv = findSystem(catalog, 'raftkv');
  });

  for (const scenario of ['basic', 'failover']) {
    it(`passes its regression scenario "${scenario}" on the correct code`, async () => {
      const r = await searchSeeds(await prepareTarget(raftkv, raftkv.dir, scenario), { seeds: 3 });
      assert.deepEqual(r.failedSeeds, [], r.firstFailure?.reason);
    });
  }

  it('lets the thread\'s timers run between seeds, so a live cluster in the same process is not starved', async () => {
    const target = await prepareTarget(raftkv, raftkv.dir, 'basic');
    const order: string[] = [];
    setTimeout(() => order.push('timer'), 0);
    await searchSeeds(target, { seeds: 3, onSeed: (r) => order.push(`seed ${r.seed}`) });
    assert.ok(order.indexOf('timer') >= 0 && order.indexOf('timer') < order.indexOf('seed 3'), order.join(', '));
  });

  it('replays a seed byte for byte, and other seeds differ', async () => {
    const scenario = catalog.bugs.find((b) => b.system === raftkv.id)!.manifest.reproducer.scenario;
    const target = await prepareTarget(raftkv, raftkv.dir, scenario);
    const digest = async (seed: number) => eventsDigest((await runSimTrial(target, { seed })).cluster.events());
    const first = await digest(7);
    assert.equal(await digest(7), first);
    assert.notEqual(await digest(8), first);
  });

  it('reproduces every bug of the system, and its reference fix passes the same seeds', async () => {
    const tmp = tempDir('ddbench-sim-bugs-');
    try {
      const report: string[] = [];
      for (const bug of catalog.bugs.filter((b) => b.system === raftkv.id)) {
        const buggyDir = `${tmp.dir}/${bug.id}`;
        materialiseBuggySource(raftkv, bug, buggyDir);
        const scenario = bug.manifest.reproducer.scenario;
        const buggy = await searchSeeds(await prepareTarget(raftkv, buggyDir, scenario), { seeds: 5 });
        // The reference fix is the reverse of bug.patch: the system's correct source.
        const fixed = await searchSeeds(await prepareTarget(raftkv, raftkv.dir, scenario), { seeds: 5 });
        report.push(`${bug.id}: buggy fails ${buggy.failedSeeds.length}/5, fixed fails ${fixed.failedSeeds.length}/5`);
        assert.ok(buggy.verdicts.fail + buggy.verdicts.timeout > 0, `${bug.id} does not reproduce under simulation`);
        assert.deepEqual(fixed.failedSeeds, [], `${bug.id}: the fix fails: ${fixed.firstFailure?.reason ?? ''}`);
      }
      assert.ok(report.length > 0);
    } finally {
      tmp.dispose();
    }
  });
});
