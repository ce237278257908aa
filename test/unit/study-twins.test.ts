// Twins in the report, on hand-made records with known answers: a miniature and the
// real-code bug with its mechanism, attempted by people and by a model.
import { strict as assert } from 'node:assert';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { bugInfos } from '../../src/core/study/reference';
import { buildReport, Report, type BugInfo } from '../../src/core/study/report';
import { reportCsv } from '../../src/core/study/report-csv';
import { reportPage } from '../../src/core/study/report-html';
import type { AttemptRecord } from '../../src/core/study/schema';
import { compareTwins } from '../../src/core/study/twins';
import { agent, human, REF_FIX } from '../support/study-fixtures';

const MINI = 'mini-lease';
const REAL = 'real-lease';
const PAIR = { miniature: MINI, upstream: REAL };

function run(bug: string, repeat: number, solved: boolean, steps: number, tokens: number): AttemptRecord {
  const a = agent('m', 'symptom-only', { bug, status: solved ? 'verified' : 'not-verified', tokens, minutes: steps });
  return { ...a, agent: { ...a.agent!, steps }, bench: { key: `${bug}|m|symptom-only|${repeat}`, repeat } };
}

/** Five repeats of a model: both solved twice, the miniature only twice, neither once. */
const MODEL_RUNS = [
  run(MINI, 0, true, 4, 4000),
  run(REAL, 0, true, 10, 12000),
  run(MINI, 1, true, 6, 6000),
  run(REAL, 1, true, 14, 16000),
  run(MINI, 2, true, 5, 5000),
  run(REAL, 2, false, 20, 30000),
  run(MINI, 3, true, 5, 5000),
  run(REAL, 3, false, 20, 30000),
  run(MINI, 4, false, 20, 20000),
  run(REAL, 4, false, 20, 30000),
];

/** Three people; p3 tried only the miniature, so has no pair. */
const PEOPLE = [
  human('p1', { bug: MINI, minutes: 20 }),
  human('p1', { bug: REAL, minutes: 50 }),
  human('p2', { bug: MINI, minutes: 30 }),
  human('p2', { bug: REAL, status: 'not-verified', minutes: 60 }),
  human('p3', { bug: MINI, status: 'gave-up', minutes: 40 }),
];

const INFO: BugInfo = { system: 's', tier: 2, title: 't', referenceFix: REF_FIX };
const BUGS = new Map<string, BugInfo>([
  [MINI, { ...INFO, kind: 'miniature', twin: REAL }],
  [REAL, { ...INFO, kind: 'upstream', twin: MINI }],
]);

describe('study: twins, the miniature against the real code', () => {
  it("pairs a model's runs by repeat and gives each side's rate, steps and tokens, the difference and the agreement", () => {
    const [t] = compareTwins([PAIR], MODEL_RUNS, () => 'm · symptom-only');
    assert.ok(t);
    assert.equal(t.groups.length, 1, 'one group: nothing pooled');
    const g = t.groups[0]!;
    assert.deepEqual([g.miniature.passed, g.miniature.n, g.upstream.passed, g.upstream.n], [4, 5, 2, 5]);
    assert.ok(Math.abs(g.difference - -0.4) < 1e-12);
    assert.ok(g.ci[0] < g.difference && g.difference < g.ci[1] && g.ci[0] >= -1 && g.ci[1] <= 1);
    assert.equal(g.miniature.meanSteps, 8);
    assert.equal(g.upstream.meanTokens, 23600);
    assert.equal(g.upstream.medianTimeToFixMs, 12 * 60_000, 'fixed runs only: 10 and 14 minutes');
    // b = 2 (miniature only), c = 0: 2 × C(2,0) / 2^2 = 0.5.
    const { p, ...counts } = g.agreement;
    assert.deepEqual(counts, { pairs: 5, both: 2, miniatureOnly: 2, upstreamOnly: 0, neither: 1 });
    assert.ok(Math.abs(p - 0.5) < 1e-12);
  });

  it('pairs people by participant, pools the groups, and leaves out a pair no group attempted on both sides', () => {
    const groupOf = (a: AttemptRecord) => (a.actor.kind === 'human' ? 'people' : 'm · symptom-only');
    const out = compareTwins([PAIR, { miniature: 'x', upstream: 'y' }], [...PEOPLE, ...MODEL_RUNS], groupOf);
    assert.equal(out.length, 1);
    const groups = new Map(out[0]!.groups.map((g) => [g.group, g]));
    assert.deepEqual([...groups.keys()], ['m · symptom-only', 'people', 'all groups']);
    const people = groups.get('people')!;
    assert.deepEqual([people.miniature.passed, people.miniature.n, people.upstream.passed, people.upstream.n], [2, 3, 1, 2]);
    assert.equal(people.miniature.meanSteps, null, 'people take no steps');
    assert.deepEqual(people.agreement, { pairs: 2, both: 1, miniatureOnly: 1, upstreamOnly: 0, neither: 0, p: 1 });
    const all = groups.get('all groups')!;
    assert.deepEqual([all.miniature.n, all.upstream.n, all.agreement.pairs, all.agreement.miniatureOnly], [8, 7, 7, 3]);
    // b = 3, c = 0: 2 × 1 / 2^3 = 0.25.
    assert.ok(Math.abs(all.agreement.p - 0.25) < 1e-12);
  });

  it('puts the twins in the report, its HTML and its CSV, only where the bug set declares the pair', () => {
    const set = { files: ['x'], attempts: [...PEOPLE, ...MODEL_RUNS], interactions: [], problems: [], conflicts: [], upgraded: 0 };
    const report = Report.parse(buildReport(set, BUGS, new Date('2026-12-03T00:00:00Z'), { seed: 1, resamples: 100 }));
    assert.equal(report.twins.length, 1);
    assert.deepEqual([report.twins[0]!.miniature, report.twins[0]!.upstream], [MINI, REAL]);
    const html = reportPage(report);
    assert.match(html, /Twins: the miniature and the real code/);
    assert.match(html, /2 \/ 2 \/ 0 \/ 1 of 5/);
    const csv = reportCsv(report).split('\n');
    const twinRows = csv.filter((l) => l.startsWith('twin,'));
    assert.equal(twinRows.length, 6, 'two sides for each of three groups');
    assert.ok(twinRows.some((l) => l.startsWith(`twin,${REAL},`) && l.includes(`,${MINI},`)));
    const without = buildReport(set, new Map([...BUGS].map(([id, b]) => [id, { ...b, twin: undefined }])));
    assert.deepEqual(without.twins, []);
    assert.doesNotMatch(reportPage(without), /Twins:/);
  });

  it("takes the pairs from the bug set's twin fields", async () => {
    const infos = bugInfos(await loadCatalog());
    const real = infos.get('etcd-lease-ttl-reset-after-leader-changes');
    assert.deepEqual([real?.kind, real?.twin], ['upstream', 'raftkv-lease-checkpoint-stops']);
    assert.deepEqual([infos.get('raftkv-lease-checkpoint-stops')?.kind, infos.get('raftkv-lease-checkpoint-stops')?.twin], ['miniature', 'etcd-lease-ttl-reset-after-leader-changes']);
  });
});
