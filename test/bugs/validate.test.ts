import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bugTableMarkdown, systemTableMarkdown } from '../../src/core/bugs/bug-table';
import { loadCatalog, type BugEntry, type Catalog } from '../../src/core/bugs/catalog';
import { validateBug, type ValidationResult } from '../../src/core/repro/verify';
import { liveHostProcesses } from '../helpers/processes';
import { inPool } from '../../src/core/pool';

/**
 * `DDBENCH_VALIDATE=full` validates with `ddbench validate`'s own defaults (each bug's
 * trial count, 200 buggy and at least 1,000 fixed seeds): the done criterion, run
 * before the README's figures are taken. By default (CI) every bug is still validated
 * live and simulated, with fewer trials and seeds, several bugs at once.
 */
const FULL = process.env.DDBENCH_VALIDATE === 'full';
const QUICK = { trials: 2, regressionTrials: 1, simBuggySeeds: 20, simSeeds: 100 };
const BUGS_AT_ONCE = Number(process.env.DDBENCH_VALIDATE_PARALLEL ?? (FULL ? 1 : 3));

/** What the issue asks of the set's breadth. */
const MIN_SYSTEMS = 13;
const MIN_BUGS = 30;
const MIN_PER_TIER = 8;
const MIN_PER_SYSTEM = 2;
/** Every kind of fault the set must cover, as categories any of which counts. */
const COVERAGE: Record<string, readonly string[]> = {
  'message timing': ['message-order', 'message-loss'],
  'crash and restart': ['crash', 'restart'],
  partition: ['partition'],
  'clock and lease': ['clock', 'lease'],
  'membership change': ['membership'],
};

describe('bug set validation', function () {
  this.timeout((FULL ? 240 : 30) * 60_000);
  let catalog: Catalog;

  before(async () => {
    catalog = await loadCatalog();
  });

  it('loads without manifest problems', () => {
    assert.deepEqual(catalog.problems, []);
  });

  it(`has ${MIN_BUGS}+ bugs from ${MIN_SYSTEMS}+ systems, ${MIN_PER_TIER}+ per tier, ${MIN_PER_SYSTEM}+ per system, covering every kind of fault`, () => {
    const bySystem = new Map<string, BugEntry[]>();
    for (const b of catalog.bugs) bySystem.set(b.system, [...(bySystem.get(b.system) ?? []), b]);
    assert.ok(catalog.systems.length >= MIN_SYSTEMS, `${catalog.systems.length} systems`);
    assert.ok(catalog.bugs.length >= MIN_BUGS, `${catalog.bugs.length} bugs`);
    for (const s of catalog.systems) assert.ok((bySystem.get(s.id)?.length ?? 0) >= MIN_PER_SYSTEM, `${s.id} has ${bySystem.get(s.id)?.length ?? 0} bugs`);
    for (const tier of [1, 2, 3]) {
      const n = catalog.bugs.filter((b) => b.tier === tier).length;
      assert.ok(n >= MIN_PER_TIER, `tier ${tier} has ${n} bugs`);
    }
    for (const [kind, categories] of Object.entries(COVERAGE)) {
      assert.ok(
        catalog.bugs.some((b) => b.categories.some((c) => categories.includes(c))),
        `no bug covers ${kind}`,
      );
    }
    const upstream = catalog.bugs.map((b) => b.modelledAfter.id);
    assert.equal(new Set(upstream).size, upstream.length, 'two bugs re-create the same upstream bug');
  });

  it("lists exactly the catalogue in the README's systems and bug tables (`ddbench bugs --markdown`)", () => {
    const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
    const block = (name: string) => new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)\\n<!-- ${name}:end -->`).exec(readme)?.[1];
    assert.equal(block('systems-table'), systemTableMarkdown(catalog), 'run `npx tsx scripts/update-bug-table.ts`');
    assert.equal(block('bug-table'), bugTableMarkdown(catalog), 'run `npx tsx scripts/update-bug-table.ts`');
  });

  it(`validates every bug live and simulated (${FULL ? "validate's defaults" : 'quick: 2 live trials per code version, 20 buggy and 100 fixed seeds'})`, async () => {
    const runs = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-validate-'));
    try {
      const results = await inPool(catalog.bugs, BUGS_AT_ONCE, async (bug) => {
        const r = await validateBug(catalog, bug, { keepRuns: runs, ...(FULL ? {} : QUICK) });
        console.log(`      ${summary(r)}`);
        return r;
      });
      assert.deepEqual(
        results.filter((r) => !r.ok).map((r) => `${r.bugId}: ${r.problems.join('; ')}`),
        [],
      );
      assert.deepEqual(liveHostProcesses(runs), [], 'node processes left behind');
    } finally {
      fs.rmSync(runs, { recursive: true, force: true });
    }
  });
});

function summary(r: ValidationResult): string {
  const sim = r.sim ? `; seeds: buggy fails ${r.sim.buggy.failed}/${r.sim.buggy.seeds}, fixed passes ${r.sim.fixed.seeds - r.sim.fixed.failed}/${r.sim.required}` : '';
  return `${r.bugId}: buggy fails ${r.buggy.failed}/${r.buggy.trials.length}, fixed passes ${r.fixed.passed}/${r.fixed.trials.length}${sim}${r.ok ? '' : ' — INVALID'}`;
}
