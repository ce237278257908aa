import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findBugSystem, loadCatalog, type BugEntry, type Catalog } from '../../src/core/bugs/catalog';
import { materialiseBuggySource } from '../../src/core/bugs/workspace';
import { applyUnifiedDiff } from '../../src/core/patch/unified';
import { runScenarioTrials } from '../../src/core/repro/trials';
import { validateBug } from '../../src/core/verify/validate';
import { inPool } from '../../src/core/pool';
import { skipUnlessRunnable, whyUpstreamCannotRun } from '../support/upstream';

/**
 * The pilot tier's bugs in real upstream code (docs/upstream-tier.md), validated live as CI
 * validates the miniatures: one trial a code version (a buggy code that passed its one
 * trial gets a second sample, never its fix), each regression check once on both. There
 * is no simulation of real binaries. CI has run `ddbench setup upstream`; elsewhere the
 * suite is skipped, saying why, until it has run.
 */
const FULL = process.env.DDBENCH_VALIDATE === 'full';
const QUICK = { trials: 1, regressionTrials: 1, concurrency: 2 };
/**
 * Jobs at once. A real cluster mostly waits (etcd-lease-ttl-reset-after-leader-changes
 * sleeps through etcd 3.4's fixed five-minute lease checkpoint interval), so two bugs or
 * shortcut checks run side by side.
 */
const AT_ONCE = 2;
/**
 * Shortcut patches the quick run leaves to `DDBENCH_VALIDATE=full`, each because it is
 * rejected only by a reproducer that waits out the five-minute checkpoint interval; their
 * bugs keep 2+ shortcuts rejected in the quick run.
 */
const SLOW_SHORTCUTS = new Set(['etcd-lease-ttl-reset-after-leader-changes/no-checkpoints']);
const DEGENERATE = path.join(__dirname, 'degenerate');
/** Shortcut patches a pilot bug needs at least (the miniatures' rule). */
const MIN_DEGENERATE = 2;

function degeneratePatches(bugId: string): string[] {
  const dir = path.join(DEGENERATE, bugId);
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.patch')).map((f) => path.join(dir, f)) : [];
}

describe('the pilot tier (real upstream code)', function () {
  this.timeout(30 * 60_000);
  let catalog: Catalog;
  let bugs: BugEntry[] = [];

  before(async function () {
    catalog = await loadCatalog();
    bugs = catalog.bugs.filter((b) => b.kind === 'upstream');
    const missing = catalog.systems.filter((s) => s.kind === 'upstream').filter((s) => !fs.existsSync(s.manifest.upstream?.tree ?? '/nonexistent')).map((s) => s.id);
    skipUnlessRunnable(this, whyUpstreamCannotRun(missing));
  });

  it('has its bugs in manifests that load, each with a reproducer and regression checks of its system', () => {
    for (const b of bugs) {
      assert.ok(b.manifest.regression.length > 0, `${b.id} has no regression checks`);
      assert.ok(fs.existsSync(path.join(b.dir, 'bug.patch')), `${b.id}: no bug.patch`);
    }
  });

  it(`has ${MIN_DEGENERATE}+ shortcut patches for every pilot bug, each rejected live (the reproducer, else a regression check, fails)`, async function () {
    if (bugs.length === 0) this.skip();
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-upstream-degenerate-'));
    try {
      const jobs = bugs.flatMap((bug) => {
        const patches = degeneratePatches(bug.id);
        assert.ok(patches.length >= MIN_DEGENERATE, `${bug.id} has ${patches.length} shortcut patches`);
        const checked = patches.filter((file) => FULL || !SLOW_SHORTCUTS.has(`${bug.id}/${path.basename(file, '.patch')}`));
        assert.ok(checked.length >= MIN_DEGENERATE, `${bug.id}: only ${checked.length} shortcut patches are checked quickly`);
        return checked.map((file) => ({ bug, file }));
      });
      const accepted = (
        await inPool(jobs, AT_ONCE, async ({ bug, file }) => {
          const system = findBugSystem(catalog, bug);
          const dir = path.join(root, `${bug.id}--${path.basename(file, '.patch')}`);
          materialiseBuggySource(system, bug, dir);
          applyUnifiedDiff(dir, fs.readFileSync(file, 'utf8'), file);
          let why: string | undefined;
          for (const scenario of [bug.manifest.reproducer.scenario, ...bug.manifest.regression]) {
            const r = await runScenarioTrials(system, dir, scenario, path.join(dir, '.runs'), { trials: 1, concurrency: 1 });
            if (r.failed > 0) {
              why = `${scenario}: ${r.trials[0]?.reason ?? ''}`;
              break;
            }
          }
          console.log(`      ${bug.id}/${path.basename(file, '.patch')}: ${why === undefined ? 'ACCEPTED (wrongly)' : `rejected — ${why.split('\n')[0]}`}`);
          fs.rmSync(dir, { recursive: true, force: true });
          return why === undefined ? [file] : [];
        })
      ).flat();
      assert.deepEqual(accepted, []);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it(`validates every pilot bug live (${FULL ? "validate's defaults" : 'quick: a live trial per code version'})`, async function () {
    if (bugs.length === 0) this.skip();
    const runs = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-upstream-validate-'));
    try {
      const problems = (
        await inPool(bugs, AT_ONCE, async (bug) => {
          const first = await validateBug(catalog, bug, { keepRuns: runs, ...(FULL ? { concurrency: 1 } : QUICK) });
          const onlyBuggyPassed = !FULL && !first.ok && first.problems.every((p) => /reproducer fails on the buggy code in 0\/1 trials/.test(p));
          // In a folder of its own: a run folder holds the nodes' data, which a second run in it would start from.
          const r = onlyBuggyPassed ? await validateBug(catalog, bug, { keepRuns: path.join(runs, 'second-sample'), ...QUICK }) : first;
          console.log(`      ${bug.id}: buggy fails ${r.buggy.failed}/${r.buggy.trials.length}, fix passes ${r.fixed.passed}/${r.fixed.trials.length}, ${r.regression.filter((x) => x.result.failed === 0).length}/${r.regression.length} regression runs pass`);
          return r.problems.map((p) => `${bug.id}: ${p}`);
        })
      ).flat();
      assert.deepEqual(problems, []);
    } finally {
      fs.rmSync(runs, { recursive: true, force: true });
    }
  });
});
