import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { findBug, loadCatalog } from '../../src/core/bugs/catalog';
import { openWorkspace } from '../../src/core/bugs/workspace';
import { diffTrees } from '../../src/core/patch/unified';
import { runReproducer } from '../../src/core/verify/reproduce';
import { validateBug } from '../../src/core/verify/validate';
import { verifyFix } from '../../src/core/verify/verify';
import { ensureLiveHost } from '../fixtures/live-host-build';
import { tempDir, writeFiles } from '../support/bugset';

/** n1 and n2 each send n3 a write; n3 must list n1's first. The bug forgets to sort, so the network decides. */
const correct = `export function createNode(rt) {
  const writes = [];
  return {
    start() {
      rt.exposeState(() => ({ writes }));
      rt.onMessage((m) => {
        if (m.type !== 'write') return;
        writes.push(m.from);
        writes.sort();
      });
      if (rt.id !== 'n3') rt.setTimer(100, () => rt.send('n3', 'write', {}));
    },
  };
}
`;
const buggy = correct.replace('        writes.sort();\n', '');
const harmless = correct.replace('export function', '// A comment changes nothing.\nexport function');

const scenario = (name: string, check: string) =>
  `export default { name: '${name}', description: '', timeoutMs: 2000, async run(t) {
  await t.sleep(300);
  const { writes } = await t.state('n3');
  t.check('${check}', ${name === 'order' ? "writes[0] === 'n1'" : 'writes.length === 2'}, { writes });
} };
`;

function bugJson(id: string) {
  return {
    id,
    title: 'Writes listed out of order',
    tier: 1,
    faults: [],
    categories: ['message-order'],
    modelledAfter: {
      project: 'toy',
      id: 'toy#2',
      url: 'https://example.org/toy/2',
      fix: { ref: 'toy#3', url: 'https://example.org/toy/3', summary: 'orders the writes' },
      status: 'fixed',
      mechanism: 'writes are listed in arrival order',
    },
    reproducer: { scenario: 'order', trials: 2 },
    regression: ['basic'],
    context: { capture: { maxEvents: 100, state: true }, notes: ['one', 'two', 'three'] },
    hints: ['look at the write list', 'compare the order', 'arrival order is not send order'],
  };
}

/** Live trials and simulated seeds together: repro, verify and validate report both. */
describe('simulation: seeds in repro, verify and validate', function () {
  this.timeout(10 * 60_000);
  const tmp = tempDir('ddbench-sim-verify-');
  const bugsDir = path.join(tmp.dir, 'bugs');
  const saved = process.env.DDBENCH_BUGS;
  let ws: string;

  before(async () => {
    await ensureLiveHost();
    const patchOf = (after: string) => {
      writeFiles(path.join(tmp.dir, 'a'), { 'src/node.mjs': correct });
      writeFiles(path.join(tmp.dir, 'b'), { 'src/node.mjs': after });
      return diffTrees(path.join(tmp.dir, 'a'), path.join(tmp.dir, 'b'), ['src']);
    };
    writeFiles(bugsDir, {
      'simtoy/system.json': JSON.stringify({
        id: 'simtoy',
        name: 'Sim toy',
        description: 'two writers and a reader',
        modelledAfter: { project: 'toy', url: 'https://example.org/toy' },
        entry: 'src/node.mjs',
        nodes: ['n1', 'n2', 'n3'],
        config: {},
        tests: ['basic'],
      }),
      'simtoy/src/node.mjs': correct,
      'simtoy/scenarios/order.mjs': scenario('order', 'n1 is listed first'),
      'simtoy/scenarios/basic.mjs': scenario('basic', 'both writes arrive'),
      'simtoy/simtoy-unsorted/bug.json': JSON.stringify(bugJson('simtoy-unsorted')),
      'simtoy/simtoy-unsorted/bug.patch': patchOf(buggy),
      'simtoy/simtoy-unsorted/ISSUE.md': '# Out of order\n',
      'simtoy/simtoy-harmless/bug.json': JSON.stringify(bugJson('simtoy-harmless')),
      'simtoy/simtoy-harmless/bug.patch': patchOf(harmless),
      'simtoy/simtoy-harmless/ISSUE.md': '# Not a bug\n',
    });
    process.env.DDBENCH_BUGS = bugsDir;
    ws = await openWorkspace(await loadCatalog(), 'simtoy-unsorted', path.join(tmp.dir, 'ws'));
  });

  after(() => {
    if (saved === undefined) delete process.env.DDBENCH_BUGS;
    else process.env.DDBENCH_BUGS = saved;
    tmp.dispose();
  });

  it('runs the reproducer live, then over simulated seeds', async () => {
    const r = await runReproducer(ws, { trials: 1, simSeeds: 12, concurrency: 1 });
    assert.equal(r.trials.length, 1);
    assert.equal(r.sim?.seeds, 12);
    assert.ok(r.sim.failed > 0 && r.sim.failed < 12, `failed ${r.sim.failed} of 12`);
    assert.equal(r.sim.firstFailingSeed, r.sim.failedSeeds[0]);
    assert.equal(r.sim.firstFailure?.violation?.check, 'n1 is listed first');
    const live = await runReproducer(ws, { trials: 1, sim: false });
    assert.equal(live.sim, undefined);
  });

  it("verifies a fix over as many seeds as the bug's failure rate calls for", async () => {
    const r = await verifyFix(ws, { kind: 'reference' }, { trials: 1, concurrency: 1 });
    assert.ok(r.sim !== undefined);
    assert.equal(r.sim.buggy.seeds, 100);
    assert.ok(r.sim.buggy.failureRate > 0.2 && r.sim.buggy.failureRate < 0.8, `buggy fails ${r.sim.buggy.failureRate}`);
    assert.equal(r.sim.required, 100, 'a failure rate this high needs only the floor');
    assert.deepEqual([r.sim.fixed.seeds, r.sim.fixed.failed, r.sim.passed], [100, 0, true]);
    assert.equal(r.verified, r.failed === 0 && r.regression.every((g) => g.failed === 0));
  });

  it('rejects a fix that fails a seed, and names the seed', async () => {
    fs.writeFileSync(path.join(ws, 'src', 'node.mjs'), harmless.replace('writes.sort();', ''));
    const r = await verifyFix(ws, { kind: 'workspace' }, { trials: 1, simSeeds: 30, concurrency: 1 });
    assert.equal(r.verified, false);
    assert.equal(r.sim?.required, 30);
    assert.equal(r.sim.fixed.failed, 1, 'the search stops at the first failing seed');
    assert.equal(r.sim.fixed.seeds, r.sim.fixed.firstFailingSeed);
    assert.equal(r.sim.passed, false);
  });

  it('validates a bug: its failure rate over seeds, and a fix that passes every seed', async () => {
    const catalog = await loadCatalog();
    const r = await validateBug(catalog, findBug(catalog, 'simtoy-unsorted'), { trials: 1, regressionTrials: 1, simSeeds: 40, concurrency: 1 });
    assert.ok(r.sim !== undefined);
    assert.equal(r.sim.buggy.seeds, 200);
    assert.ok(r.sim.buggy.failed > 0);
    assert.deepEqual([r.sim.required, r.sim.fixed.seeds, r.sim.fixed.failed], [40, 40, 0]);
    assert.deepEqual(r.problems.filter((p) => p.includes('simulation')), []);
    const harmlessBug = await validateBug(catalog, findBug(catalog, 'simtoy-harmless'), { trials: 1, regressionTrials: 1, simSeeds: 20, concurrency: 1 });
    assert.ok(harmlessBug.problems.some((p) => /reproducer never fails under simulation on the buggy code \(200 seeds from 1\)/.test(p)), harmlessBug.problems.join('\n'));
  });
});
