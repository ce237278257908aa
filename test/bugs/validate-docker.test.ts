import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { BUILT_REPO, IMAGE_LABEL } from '../../src/core/cluster/docker/node-image';
import { LABEL } from '../../src/core/cluster/docker/run-labels';
import { validateBug } from '../../src/core/verify/validate';
import { dockerOrSkip } from '../support/docker';

/**
 * The bug set validated on the docker backend: the reproducer fails on the buggy code in
 * at least 90% of live trials with every node in a container, passes on the fix in all,
 * and the regression checks pass. Simulation does not depend on the backend, so it is
 * left to the process-backend validation. `DDBENCH_VALIDATE=full` validates every bug
 * of the set with its own trial count (hours: a bug takes about ten minutes on two
 * cores); CI validates the raftkv bugs' reproducers with a trial a code version (their
 * regression checks run in simulation in the process-backend validation), since one bug
 * per system would add more than ten minutes (docs/measurements.md has the per-bug
 * figures).
 */
const FULL = process.env.DDBENCH_VALIDATE === 'full';
const QUICK = { trials: 1, liveRegression: false };
const QUICK_BUGS = ['raftkv-lock-double-grant', 'raftkv-no-leader-after-heal', 'raftkv-restart-divergence'];
/** One bug's live validation at its own trial count on a loaded two-core machine takes well under this. */
const PER_BUG_MS = 45 * 60_000;

describe('bug set validation on the docker backend', function () {
  let docker: Docker;
  let catalog: Catalog;
  let runs: string;
  let danglingBefore: number;
  // Only images DDBench made (labelled): other users of the engine may be building meanwhile.
  const ourDangling = { dangling: ['true'], label: [IMAGE_LABEL] };

  before(async function () {
    docker = await dockerOrSkip(this);
    catalog = await loadCatalog();
    danglingBefore = (await docker.listImages({ filters: ourDangling })).length;
    runs = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-validate-docker-'));
  });

  after(() => {
    if (runs !== undefined) fs.rmSync(runs, { recursive: true, force: true });
  });

  // Mocha names its tests before any hook runs, so the bugs are listed from their folders; each test validates the loaded catalogue's entry.
  for (const id of FULL ? bugIds() : QUICK_BUGS) {
    it(`validates ${id} with its nodes in containers${FULL ? '' : ` (quick: ${QUICK.trials} trial a code version)`}`, async function () {
      this.timeout(PER_BUG_MS);
      const bug = catalog.bugs.find((b) => b.id === id);
      assert.ok(bug, `${id} is not in the catalogue`);
      const r = await validateBug(catalog, bug, { keepRuns: runs, sim: false, backend: { backend: 'docker' }, ...(FULL ? {} : QUICK) });
      console.log(`      ${bug.id}: buggy fails ${r.buggy.failed}/${r.buggy.trials.length}, fixed passes ${r.fixed.passed}/${r.fixed.trials.length}`);
      assert.equal(r.buggy.trials.length, FULL ? bug.manifest.reproducer.trials : QUICK.trials);
      assert.deepEqual(r.problems, []);
    });
  }

  it('leaves no container, network or image layer', async () => {
    const ours = { label: [`${LABEL.harnessPid}=${process.pid}`] };
    assert.deepEqual(await docker.listContainers({ all: true, filters: ours }), [], 'containers left behind');
    assert.deepEqual(await docker.listNetworks({ filters: ours }), [], 'networks left behind');
    assert.equal((await docker.listImages({ filters: ourDangling })).length, danglingBefore, 'image layers left behind');
    assert.equal((await docker.listImages({ filters: { reference: [`${BUILT_REPO}:*`] } })).length, 1, 'one cached node image');
  });
});

/** Every bug of the set, by its folder (bugs/<system>/<bug>/bug.json), for naming the tests before the catalogue loads. */
function bugIds(): string[] {
  const root = path.join(__dirname, '..', '..', 'bugs');
  return fs
    .readdirSync(root, { withFileTypes: true })
    .filter((s) => s.isDirectory())
    .flatMap((s) => fs.readdirSync(path.join(root, s.name), { withFileTypes: true }).filter((b) => b.isDirectory() && fs.existsSync(path.join(root, s.name, b.name, 'bug.json'))).map((b) => b.name))
    .sort();
}
