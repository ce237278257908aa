import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { BUILT_REPO, IMAGE_LABEL } from '../../src/core/cluster/docker/node-image';
import { LABEL } from '../../src/core/cluster/docker/run-labels';
import { validateBug } from '../../src/core/repro/verify';
import { dockerOrSkip } from '../helpers/docker';

/**
 * The raftkv bugs validated on the docker backend: the reproducer fails on the buggy
 * code in at least 90% of live trials with every node in a container, passes on the fix
 * in all, and the regression checks pass. Simulation does not depend on the backend, so
 * it is left to the process-backend validation. As in validate.test.ts,
 * `DDBENCH_VALIDATE=full` runs each bug's own trial count; CI runs fewer.
 */
const FULL = process.env.DDBENCH_VALIDATE === 'full';
const QUICK = { trials: 2, regressionTrials: 1 };
const QUICK_BUG = 'raftkv-lock-double-grant';

describe('bug set validation on the docker backend', function () {
  this.timeout(60 * 60_000);
  let docker: Docker;

  before(async function () {
    docker = await dockerOrSkip(this);
  });

  it(`validates ${FULL ? 'every raftkv bug' : QUICK_BUG} with its nodes in containers, leaving no container, network or image layer`, async () => {
    const catalog = await loadCatalog();
    // CI validates one bug on containers (the backend is what is under test here); the full run takes every raftkv bug.
    const bugs = catalog.bugs.filter((b) => b.system === 'raftkv' && (FULL || b.id === QUICK_BUG));
    assert.ok(bugs.length > 0);
    // Only images DDBench made (labelled): other users of the engine may be building meanwhile.
    const ourDangling = { dangling: ['true'], label: [IMAGE_LABEL] };
    const danglingBefore = (await docker.listImages({ filters: ourDangling })).length;
    const runs = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-validate-docker-'));
    try {
      const failures: string[] = [];
      for (const bug of bugs) {
        const r = await validateBug(catalog, bug, { keepRuns: runs, sim: false, backend: { backend: 'docker' }, ...(FULL ? {} : QUICK) });
        console.log(`      ${bug.id}: buggy fails ${r.buggy.failed}/${r.buggy.trials.length}, fixed passes ${r.fixed.passed}/${r.fixed.trials.length}`);
        assert.equal(r.buggy.trials.length, FULL ? bug.manifest.reproducer.trials : QUICK.trials);
        if (!r.ok) failures.push(`${bug.id}: ${r.problems.join('; ')}`);
      }
      assert.deepEqual(failures, []);
    } finally {
      fs.rmSync(runs, { recursive: true, force: true });
    }
    const ours = { label: [`${LABEL.harnessPid}=${process.pid}`] };
    assert.deepEqual(await docker.listContainers({ all: true, filters: ours }), [], 'containers left behind');
    assert.deepEqual(await docker.listNetworks({ filters: ours }), [], 'networks left behind');
    assert.equal((await docker.listImages({ filters: ourDangling })).length, danglingBefore, 'image layers left behind');
    assert.equal((await docker.listImages({ filters: { reference: [`${BUILT_REPO}:*`] } })).length, 1, 'one cached node image');
  });
});
