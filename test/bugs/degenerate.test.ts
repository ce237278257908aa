import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { openWorkspace } from '../../src/core/bugs/workspace';
import { inPool } from '../../src/core/pool';
import { verifyFix, type VerifyResult } from '../../src/core/repro/verify';
import { liveHostProcesses } from '../helpers/processes';

/**
 * Patches that silence a bug's symptom without fixing its cause — refuse every request,
 * stop replicating, disable the failure detector, swallow the error — must not verify:
 * the reproducers check progress as well as safety, and the regression checks run too.
 * Each lives in test/bugs/degenerate/<bug id>/<name>.patch, a diff against the bug's
 * buggy source whose first line says what it does.
 */
const DIR = path.join(__dirname, 'degenerate');
const MIN_PER_SYSTEM = 2;
/** One live trial, then the regression checks and the seeds, stopping at the first that fails (the verdict is known). */
const CHECK = { trials: 1, regressionTrials: 1, simBuggySeeds: 20, simSeeds: 100, failFast: true };
const AT_ONCE = Number(process.env.DDBENCH_VALIDATE_PARALLEL ?? 3);

interface Degenerate {
  bugId: string;
  name: string;
  file: string;
  description: string;
}

function degeneratePatches(): Degenerate[] {
  return fs.readdirSync(DIR).flatMap((bugId) =>
    fs
      .readdirSync(path.join(DIR, bugId))
      .filter((f) => f.endsWith('.patch'))
      .map((f) => {
        const file = path.join(DIR, bugId, f);
        return { bugId, name: path.basename(f, '.patch'), file, description: fs.readFileSync(file, 'utf8').split('\n')[0]!.trim() };
      }),
  );
}

/** Why a verification turned a patch down, in a few words. */
function rejection(r: VerifyResult): string {
  const reasons: string[] = [];
  if (r.failed > 0) reasons.push(`reproducer ${r.failed}/${r.trials.length} live trials: ${r.trials.find((t) => t.verdict !== 'pass')?.reason ?? ''}`);
  for (const g of r.regression) if (g.failed > 0) reasons.push(`regression "${g.scenario}": ${g.trials.find((t) => t.verdict !== 'pass')?.reason ?? ''}`);
  if (r.sim && !r.sim.passed) reasons.push(`simulation: seed ${r.sim.fixed.firstFailingSeed ?? '?'} fails: ${r.sim.fixed.firstFailure?.reason ?? ''}`);
  return reasons.join('; ');
}

describe('degenerate fixes are rejected', function () {
  this.timeout(30 * 60_000);
  let catalog: Catalog;
  const patches = degeneratePatches();

  before(async () => {
    catalog = await loadCatalog();
  });

  it(`has ${MIN_PER_SYSTEM}+ degenerate patches for every system, each for a bug of the set and described`, () => {
    for (const p of patches) {
      assert.ok(catalog.bugs.some((b) => b.id === p.bugId), `${p.file}: no bug ${p.bugId}`);
      assert.ok(p.description.length > 10 && !p.description.startsWith('---'), `${p.file}: the first line must say what the patch does`);
    }
    for (const s of catalog.systems) {
      const n = patches.filter((p) => catalog.bugs.find((b) => b.id === p.bugId)?.system === s.id).length;
      assert.ok(n >= MIN_PER_SYSTEM, `${s.id} has ${n} degenerate patches`);
    }
  });

  it('verification rejects every one (a live trial, the regression checks, simulated seeds; fail-fast)', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-degenerate-'));
    try {
      const verdicts = await inPool(patches, AT_ONCE, async (p) => {
        const ws = await openWorkspace(catalog, p.bugId, path.join(root, `${p.bugId}--${p.name}`));
        const r = await verifyFix(ws, { kind: 'patch', file: p.file }, CHECK);
        console.log(`      ${p.bugId}/${p.name}: ${r.verified ? 'VERIFIED (wrongly)' : `rejected — ${rejection(r)}`}`);
        if (r.failed > 0) assert.ok(r.regression.length === 0 && r.sim === undefined, 'fail-fast runs nothing after a failing reproducer');
        return { patch: `${p.bugId}/${p.name}`, verified: r.verified };
      });
      assert.deepEqual(verdicts.filter((v) => v.verified).map((v) => v.patch), []);
      assert.deepEqual(liveHostProcesses(root), [], 'node processes left behind');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
