import { strict as assert } from 'node:assert';
import type { RecordSet } from '../../src/core/study/collect';
import { patchSimilarity, patchStat } from '../../src/core/study/patch-metrics';
import { buildReport, Report, type BugInfo, type Summary } from '../../src/core/study/report';
import { reportCsv } from '../../src/core/study/report-csv';
import { reportPage } from '../../src/core/study/report-html';
import type { AttemptRecord } from '../../src/core/study/schema';
import { median, newcombe, wilson } from '../../src/core/study/stats';
import { agent, human, OTHER_FIX, REF_FIX, runs } from '../support/study-fixtures';

const close = (actual: number | null | undefined, expected: number, digits = 4) => {
  assert.ok(actual !== null && actual !== undefined, `expected ${expected}, got ${actual}`);
  assert.ok(Math.abs(actual - expected) < 0.5 * 10 ** -digits, `expected ${expected}, got ${actual}`);
};
const closeCi = (ci: [number, number], lo: number, hi: number) => {
  close(ci[0], lo);
  close(ci[1], hi);
};

describe('study statistics', () => {
  it('Wilson intervals match published values', () => {
    // Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I.
    closeCi(wilson(81, 263), 0.2553, 0.3662);
    closeCi(wilson(5, 10), 0.2366, 0.7634);
    closeCi(wilson(0, 10), 0, 0.2775);
    closeCi(wilson(10, 10), 0.7225, 1);
    assert.deepEqual(wilson(0, 0), [0, 1]);
  });

  it("Newcombe's difference intervals match published values", () => {
    // Newcombe (1998), "Interval estimation for the difference between independent proportions", Table II, method 10.
    closeCi(newcombe(56, 70, 48, 80), 0.0524, 0.3339);
    closeCi(newcombe(9, 10, 3, 10), 0.1705, 0.809);
    closeCi(newcombe(5, 56, 0, 29), -0.0381, 0.1926);
  });

  it('median of odd, even and empty lists', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.equal(median([]), null);
  });
});

describe('patch metrics', () => {
  it('counts changed lines and files', () => {
    assert.deepEqual(patchStat(REF_FIX), { files: ['src/total.mjs'], added: 1, removed: 1 });
    assert.deepEqual(patchStat(''), { files: [], added: 0, removed: 0 });
    assert.deepEqual(patchStat('not a diff at all'), { files: [], added: 0, removed: 0 });
  });

  it('similarity is the Jaccard index of changed lines, blind to whitespace', () => {
    assert.equal(patchSimilarity(REF_FIX, REF_FIX), 1);
    close(patchSimilarity(OTHER_FIX, REF_FIX), 1 / 3);
    assert.equal(patchSimilarity(REF_FIX.replace('+  return total + n;', '+\treturn   total + n;'), REF_FIX), 1);
    assert.equal(patchSimilarity(REF_FIX.replace(/total\.mjs/g, 'other.mjs'), REF_FIX), 0, 'the same lines in another file are another change');
  });
});

describe('study report on hand-made records', () => {
  const bugs = new Map<string, BugInfo>([
    ['bug-a', { system: 'counter', tier: 1, title: 'A', referenceFix: REF_FIX }],
    ['bug-b', { system: 'counter', tier: 2, title: 'B', referenceFix: REF_FIX }],
  ]);
  const onBug = (bug: string, tier: 1 | 2) => ({ bug, tier });
  const records: AttemptRecord[] = [
    // People: bug-a 2 of 3 (fixed in 10 and 20 minutes; one gave up), bug-b 0 of 2 (one with another fix).
    human('P01', { ...onBug('bug-a', 1), minutes: 10, attempts: 1, hints: 2 }),
    human('P02', { ...onBug('bug-a', 1), minutes: 20, attempts: 3, patch: OTHER_FIX, hints: 1, fromEdits: true }),
    human('P03', { ...onBug('bug-a', 1), status: 'gave-up', patch: null, attempts: 0 }),
    human('P01', { ...onBug('bug-b', 2), status: 'not-verified', attempts: 2, patch: OTHER_FIX }),
    human('P02', { ...onBug('bug-b', 2), status: 'timed-out', patch: null, attempts: 0 }),
    // Not counted: still going, and a run that broke.
    human('P04', { ...onBug('bug-a', 1), status: 'in-progress', patch: null }),
    agent('x', 'symptom-only', { ...onBug('bug-a', 1), status: 'error', patch: null }),
    // Model x: symptom-only 1/10, context-augmented 5/10. Model y: 9/10 and 10/10.
    ...runs(5, 1, (status) => agent('x', 'symptom-only', { ...onBug('bug-a', 1), status, tokens: 2000, costUsd: 0.02 })),
    ...runs(5, 0, (status) => agent('x', 'symptom-only', { ...onBug('bug-b', 2), status, tokens: 4000, costUsd: 0.04 })),
    ...runs(5, 4, (status) => agent('x', 'context-augmented', { ...onBug('bug-a', 1), status })),
    ...runs(5, 1, (status) => agent('x', 'context-augmented', { ...onBug('bug-b', 2), status })),
    ...runs(5, 5, (status) => agent('y', 'symptom-only', { ...onBug('bug-a', 1), status })),
    ...runs(5, 4, (status) => agent('y', 'symptom-only', { ...onBug('bug-b', 2), status })),
    ...runs(5, 5, (status) => agent('y', 'context-augmented', { ...onBug('bug-a', 1), status })),
    ...runs(5, 5, (status) => agent('y', 'context-augmented', { ...onBug('bug-b', 2), status })),
  ];
  const set: RecordSet = { attempts: records, interactions: [], problems: [], files: ['a.jsonl'], upgraded: 0, conflicts: [] };
  const report = buildReport(set, bugs, new Date('2026-03-03T00:00:00Z'));
  const cell = (scope: 'bug' | 'tier' | 'all', group: string, where: { bugId?: string; tier?: number } = {}): Summary => {
    const c = report.cells.find((x) => x.scope === scope && x.group === group && (where.bugId === undefined || x.bugId === where.bugId) && (where.tier === undefined || x.tier === where.tier));
    assert.ok(c, `cell ${scope} ${group} ${JSON.stringify(where)}`);
    return c.summary;
  };

  it('is a valid Report (what the webview receives)', () => {
    assert.ok(Report.safeParse(JSON.parse(JSON.stringify(report))).success);
  });

  it('counts finished attempts only', () => {
    assert.equal(report.counted, 45);
    assert.equal(report.inProgress, 1);
    assert.equal(report.errors, 1);
    assert.deepEqual(report.groups.map((g) => g.id), ['people', 'x · symptom-only', 'x · context-augmented', 'y · symptom-only', 'y · context-augmented']);
  });

  it("people's figures per bug: pass rate, interval, time to fix, submissions, patch size, similarity", () => {
    const a = cell('bug', 'people', { bugId: 'bug-a' });
    assert.deepEqual([a.passed, a.n], [2, 3]);
    closeCi(a.ci, 0.2077, 0.9385);
    assert.equal(a.timeToFixMs.median, 15 * 60_000);
    assert.equal(a.submissions, 4 / 3);
    assert.equal(a.patchLines, 2);
    close(a.similarity, (1 + 1 / 3) / 2, 6);
    assert.equal(a.gaveUp, 1);
    assert.equal(a.tokens, null, 'people have no tokens');
    assert.equal(a.hints, 1, 'hints taken: 2, 1 and 0');
    assert.equal(a.fromEdits, 1, 'one attempt started from an edited workspace');
    assert.equal(cell('bug', 'x · symptom-only', { bugId: 'bug-a' }).hints, null, 'agents are never shown hints');
    assert.deepEqual(report.attempts.filter((r) => r.participant === 'P02' && r.bugId === 'bug-a').map((r) => [r.hints, r.fromEdits]), [[1, true]]);
    const b = cell('bug', 'people', { bugId: 'bug-b' });
    assert.deepEqual([b.passed, b.n, b.timedOut], [0, 2, 1]);
    assert.equal(b.timeToFixMs.median, null);
    close(b.similarity, 1 / 3, 6);
  });

  it('pass rates per group overall and per tier, with Wilson intervals; tokens and cost', () => {
    const x = cell('all', 'x · symptom-only');
    assert.deepEqual([x.passed, x.n], [1, 10]);
    closeCi(x.ci, 0.0179, 0.4042);
    assert.equal(x.tokens, 3000);
    close(x.costUsd, 0.03, 6);
    close(x.totalCostUsd, 0.3, 6);
    const t2 = cell('tier', 'x · context-augmented', { tier: 2 });
    assert.deepEqual([t2.passed, t2.n], [1, 5]);
  });

  it('context lift per model and overall, with Newcombe intervals', () => {
    const [x, y] = report.lift.perModel;
    assert.equal(x?.model, 'x');
    close(x!.lift, 0.4);
    closeCi(x!.ci, -0.0024, 0.6759);
    assert.equal(y?.model, 'y');
    close(y!.lift, 0.1);
    closeCi(y!.ci, -0.1894, 0.4042);
    const all = report.lift.overall!;
    assert.deepEqual([all.contextAugmented.passed, all.contextAugmented.n, all.symptomOnly.passed, all.symptomOnly.n], [15, 20, 10, 20]);
    close(all.lift, 0.25);
    closeCi(all.ci, -0.0468, 0.4936);
  });

  it('pairs the lift by bug: a bug run in one condition only is left out', () => {
    const unpaired: AttemptRecord[] = [
      ...records,
      // Model x also ran an easy bug-c, but only with the context: counting it would inflate x's lift.
      ...runs(5, 5, (status) => agent('x', 'context-augmented', { ...onBug('bug-c', 1), status })),
    ];
    const r = buildReport({ ...set, attempts: unpaired }, bugs, new Date('2026-03-03T00:00:00Z'));
    const [x] = r.lift.perModel;
    assert.deepEqual(x?.bugs, ['bug-a', 'bug-b']);
    assert.deepEqual([x!.contextAugmented.passed, x!.contextAugmented.n], [5, 10]);
    close(x!.lift, 0.4);
    assert.deepEqual([r.lift.overall!.contextAugmented.passed, r.lift.overall!.contextAugmented.n], [15, 20]);
    assert.ok(r.cells.some((c) => c.scope === 'bug' && c.bugId === 'bug-c'), 'the runs still count in the per-bug figures');
  });

  it('spread of pass rates across models', () => {
    const by = Object.fromEntries(report.spread.map((s) => [s.condition, s]));
    close(by['symptom-only']!.spreadPp, 80);
    assert.deepEqual([by['symptom-only']!.min.model, by['symptom-only']!.max.model], ['x', 'y']);
    close(by['context-augmented']!.spreadPp, 50);
    close(by.all!.spreadPp, 65);
  });

  it('people against agents per bug', () => {
    const a = report.peopleVsAgents.find((p) => p.bugId === 'bug-a')!;
    assert.deepEqual([a.people.passed, a.people.n, a.agents.passed, a.agents.n], [2, 3, 15, 20]);
    close(a.difference, 2 / 3 - 0.75);
    closeCi(a.ci, -0.5627, 0.2656);
  });

  it('CSV has one row per cell plus the lift rows, and parses back to the same figures', () => {
    const lines = reportCsv(report).trim().split('\n');
    const head = lines[0]!.split(',');
    assert.equal(lines.length - 1, report.cells.length + report.lift.perModel.length + 1);
    const row = lines.find((l) => l.startsWith('all,,,x · symptom-only,'))!.split(',');
    const col = (name: string) => row[head.indexOf(name)];
    assert.deepEqual([col('n'), col('passed'), col('pass_rate'), col('mean_tokens')], ['10', '1', '0.1', '3000']);
    const lift = lines.find((l) => l.startsWith('lift,,,all models,'))!.split(',');
    assert.equal(lift[head.indexOf('pass_rate')], '0.25');
  });

  it('HTML works offline: inline SVG charts, no script, no external reference', () => {
    const html = reportPage(report);
    assert.match(html, /<svg /);
    assert.match(html, /Context lift/);
    assert.doesNotMatch(html, /<script/i);
    assert.doesNotMatch(html, /(src|href)="https?:/i);
    assert.doesNotMatch(html, / style="/, 'no style attributes (a strict CSP would block them)');
    assert.match(html, /x · context-augmented/);
  });

  it('escapes names from records in HTML', () => {
    const evil = agent('<img src=x onerror=alert(1)>', 'symptom-only');
    const html = reportPage(buildReport({ ...set, attempts: [evil] }, bugs));
    assert.doesNotMatch(html, /<img/);
  });
});
