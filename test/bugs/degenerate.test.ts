import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findBug, findSystem, loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { materialiseBuggySource, openWorkspace } from '../../src/core/bugs/workspace';
import { applyUnifiedDiff } from '../../src/core/patch/unified';
import { inPool } from '../../src/core/pool';
import { simulate } from '../../src/core/verify/simulate';
import { verifyFix, type VerifyResult } from '../../src/core/verify/verify';
import { liveHostProcesses } from '../support/processes';
import { simulatedFailures, type SimulatedFailure } from '../support/simulated';

/**
 * Shortcut patches must not verify: ones that remove or bypass the safety mechanism
 * nearest the bug, ones that put back the upstream's own pre-fix behaviour, and ones
 * that suppress the symptom (refuse, retry forever, skip the check). The reproducers
 * check progress as well as safety, and the regression checks exercise the mechanisms.
 * Each lives in test/bugs/degenerate/<bug id>/<name>.patch, a diff against the bug's
 * buggy source whose first line says what it does (docs/adding-a-bug.md).
 *
 * What CI relies on is simulation: every patch fails the reproducer or a regression
 * check on some seed, and that seed fails again when replayed. `DDBENCH_VALIDATE=full`
 * also verifies each patch live, as `ddbench verify` does (this needs the live lock).
 */
const DIR = path.join(__dirname, 'degenerate');
const MIN_PER_BUG = 3;
const LIVE = process.env.DDBENCH_VALIDATE === 'full';
/** One live trial, then the regression checks and the seeds, stopping at the first that fails (the verdict is known). */
const CHECK = { trials: 1, regressionTrials: 1, simBuggySeeds: 20, simSeeds: 100, failFast: true };
/** Seeds each scenario gets in the deterministic check. */
const SIM_SEEDS = 20;
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

/** The first scenario (reproducer, then regression checks) that fails on the patched code in simulation, with its seed and reason. */
async function failingInSimulation(catalog: Catalog, p: Degenerate, dir: string): Promise<SimulatedFailure | undefined> {
  const bug = findBug(catalog, p.bugId);
  const system = findSystem(catalog, bug.system);
  materialiseBuggySource(system, bug, dir);
  applyUnifiedDiff(dir, fs.readFileSync(p.file, 'utf8'));
  for await (const f of simulatedFailures(system, dir, [bug.manifest.reproducer.scenario, ...bug.manifest.regression], SIM_SEEDS)) return f;
  return undefined;
}

/** Whether replaying the failing seed fails again, for the same reason. */
async function failsAgain(catalog: Catalog, p: Degenerate, dir: string, f: SimulatedFailure): Promise<boolean> {
  const system = findSystem(catalog, findBug(catalog, p.bugId).system);
  const r = await simulate(system, dir, f.scenario, { seeds: 1, from: f.seed });
  return r.failed === 1 && (r.firstFailure?.reason ?? '') === f.reason;
}

describe('degenerate fixes are rejected', function () {
  this.timeout(30 * 60_000);
  let catalog: Catalog;
  /** The miniatures' patches; the pilot tier's are checked live in upstream-validate.test.ts. */
  let patches: Degenerate[] = [];
  let upstream = new Set<string>();

  before(async () => {
    catalog = await loadCatalog();
    upstream = new Set(catalog.bugs.filter((b) => b.kind === 'upstream').map((b) => b.id));
    patches = degeneratePatches().filter((p) => !upstream.has(p.bugId));
  });

  it(`has ${MIN_PER_BUG}+ degenerate patches for every bug, each described`, () => {
    for (const p of degeneratePatches()) {
      assert.ok(catalog.bugs.some((b) => b.id === p.bugId), `${p.file}: no bug ${p.bugId}`);
      assert.ok(p.description.length > 10 && !p.description.startsWith('---'), `${p.file}: the first line must say what the patch does`);
    }
    const few = catalog.bugs.filter((b) => b.kind === 'miniature').map((b) => ({ bug: b.id, n: patches.filter((p) => p.bugId === b.id).length })).filter((c) => c.n < MIN_PER_BUG);
    assert.deepEqual(few, [], `bugs with fewer than ${MIN_PER_BUG} degenerate patches`);
  });

  it('each fails the reproducer or a regression check in simulation, and its failing seed fails again when replayed', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-degenerate-sim-'));
    try {
      const verdicts = await inPool(patches, AT_ONCE, async (p) => {
        const dir = path.join(root, `${p.bugId}--${p.name}`);
        const f = await failingInSimulation(catalog, p, dir);
        const replayed = f !== undefined && (await failsAgain(catalog, p, dir, f));
        console.log(`      ${p.bugId}/${p.name}: ${f ? `${f.scenario} seed ${f.seed}: ${f.reason}${replayed ? '' : ' (NOT on replay)'}` : 'passes every scenario'}`);
        return { patch: `${p.bugId}/${p.name}`, failed: f !== undefined, replayed };
      });
      assert.deepEqual(verdicts.filter((v) => !v.failed).map((v) => v.patch), [], 'patches that pass the reproducer and every regression check in simulation');
      assert.deepEqual(verdicts.filter((v) => v.failed && !v.replayed).map((v) => v.patch), [], 'patches whose failing seed does not fail the same way on replay');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  (LIVE ? it : it.skip)('verification rejects every one live (a live trial, the regression checks, simulated seeds; fail-fast)', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-degenerate-'));
    try {
      const verdicts = await inPool(patches, AT_ONCE, async (p) => {
        const ws = await openWorkspace(catalog, p.bugId, path.join(root, `${p.bugId}--${p.name}`));
        const r = await verifyFix(ws, { kind: 'patch', file: p.file }, CHECK);
        if (r.failed > 0) assert.ok(r.regression.length === 0 && r.sim === undefined, 'fail-fast runs nothing after a failing reproducer');
        console.log(`      ${p.bugId}/${p.name}: ${r.verified ? 'VERIFIED (wrongly)' : `rejected — ${rejection(r)}`}`);
        return { patch: `${p.bugId}/${p.name}`, verified: r.verified };
      });
      assert.deepEqual(verdicts.filter((v) => v.verified).map((v) => v.patch), []);
      assert.deepEqual(liveHostProcesses(root), [], 'node processes left behind');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
