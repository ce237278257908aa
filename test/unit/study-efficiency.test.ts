// The paper's third finding on hand-made runs with known answers: McNemar against
// published examples, Spearman against a textbook example, seeded bootstrap intervals,
// the efficiency lift of paired runs, and the asymmetry of rate against efficiency.
import { strict as assert } from 'node:assert';
import { asymmetry, efficiencyLift, pairRuns } from '../../src/core/study/efficiency';
import { buildReport, Report } from '../../src/core/study/report';
import { reportPage } from '../../src/core/study/report-html';
import type { AttemptRecord, Condition } from '../../src/core/study/schema';
import { bootstrapMean, mcnemarExact, spearman } from '../../src/core/study/stats';
import { agent } from '../support/study-fixtures';

/** One run of `model` on `bug`, repeat `repeat`, solved or not, with the steps, tokens and minutes given. */
function run(model: string, condition: Condition, bug: string, repeat: number, solved: boolean, steps: number, minutes = 10, tokens = steps * 1000): AttemptRecord {
  const a = agent(model, condition, { bug, status: solved ? 'verified' : 'not-verified', minutes, tokens, costUsd: tokens / 1e6 });
  return { ...a, agent: { ...a.agent!, steps }, bench: { key: `${bug}|${model}|${condition}|${repeat}`, repeat } };
}

describe('study: efficiency lift, McNemar and the asymmetry', () => {
  it('McNemar exact p matches published examples, and is symmetric', () => {
    // b = 1, c = 9: 2 × (C(10,0) + C(10,1)) / 2^10.
    assert.ok(Math.abs(mcnemarExact(1, 9) - 22 / 1024) < 1e-12);
    assert.equal(mcnemarExact(9, 1), mcnemarExact(1, 9));
    // b = 15, c = 5: 2 × Σ_{i ≤ 5} C(20, i) / 2^20 = 43,400 / 1,048,576.
    assert.ok(Math.abs(mcnemarExact(15, 5) - 43_400 / 1_048_576) < 1e-12);
    assert.equal(mcnemarExact(0, 0), 1);
    assert.equal(mcnemarExact(3, 3), 1);
  });

  it('Spearman rho matches the textbook example (IQ against hours of TV: −29/165), with a Fisher interval from four points', () => {
    const iq = [106, 86, 100, 101, 99, 103, 97, 113, 112, 110];
    const tv = [7, 0, 27, 50, 28, 29, 20, 12, 6, 17];
    const r = spearman(iq, tv);
    assert.ok(r !== null && r.ci !== null);
    assert.ok(Math.abs(r.rho - -29 / 165) < 1e-12);
    assert.ok(r.ci[0] < r.rho && r.rho < r.ci[1] && r.ci[0] > -1 && r.ci[1] < 1);
    assert.deepEqual(spearman([1, 2, 3], [3, 2, 1]), { rho: -1, n: 3, ci: null }, 'three points: rho, no interval');
    assert.equal(spearman([1, 2], [1, 2]), null);
    assert.equal(spearman([1, 1, 1], [1, 2, 3]), null, 'no spread');
  });

  it('a bootstrap interval is the same for the same seed, covers the mean, and moves with the seed', () => {
    const values = [-3, -2, -2, -1, 0, -4, -2];
    const a = bootstrapMean(values, 7, 1000);
    const b = bootstrapMean(values, 7, 1000);
    assert.ok(a !== null && b !== null);
    assert.deepEqual(a, b);
    assert.equal(a.mean, -2);
    assert.ok(a.ci[0] <= a.mean && a.mean <= a.ci[1] && a.ci[0] >= -4 && a.ci[1] <= 0);
    const spread = [1.3, -2.7, 0.4, 5.1, -1.9, 2.2, 0.8, -0.6, 3.3, -4.4];
    assert.notDeepEqual(bootstrapMean(spread, 7, 1000)?.ci, bootstrapMean(spread, 8, 1000)?.ci, 'another seed, other resamples');
    assert.equal(bootstrapMean([], 1), null);
  });

  it("pairs a model's runs by bug and repeat, and measures what the context changes on pairs solved in both", () => {
    const runs = [
      run('m', 'symptom-only', 'b1', 0, true, 10, 20),
      run('m', 'context-augmented', 'b1', 0, true, 6, 12),
      run('m', 'symptom-only', 'b1', 1, true, 12, 30),
      run('m', 'context-augmented', 'b1', 1, true, 8, 18),
      run('m', 'symptom-only', 'b2', 0, false, 30),
      run('m', 'context-augmented', 'b2', 0, true, 14),
      run('m', 'symptom-only', 'b3', 0, false, 30),
      run('m', 'context-augmented', 'b3', 0, false, 25),
      // Unpaired: no symptom-only run of b4.
      run('m', 'context-augmented', 'b4', 0, true, 5),
    ];
    assert.equal(pairRuns(runs).length, 4);
    const e = efficiencyLift('m', runs, 42, 500);
    assert.deepEqual([e.pairs, e.solvedBoth, e.unsolvedBoth], [4, 2, 1]);
    assert.deepEqual(e.mcnemar, { pairs: 4, symptomOnlyOnly: 0, contextOnly: 1, p: 1 });
    assert.ok(e.solved.steps !== null && e.solved.timeToFixMs !== null && e.unsolved.steps !== null);
    assert.deepEqual([e.solved.steps.pairs, e.solved.steps.symptomOnly, e.solved.steps.contextAugmented, e.solved.steps.meanChange], [2, 11, 7, -4]);
    assert.equal(e.solved.timeToFixMs.meanChange, -10 * 60_000);
    assert.equal(e.unsolved.steps.meanChange, -5);
    assert.deepEqual(efficiencyLift('m', runs, 42, 500), e, 'the same seed, the same intervals');
  });

  it('orders models by baseline and correlates strength with each lift: weaker gain rate, stronger gain efficiency', () => {
    // Four models on ten bugs: the weaker the baseline, the larger the rate lift; the stronger, the more steps saved.
    const plan = [
      { model: 'weak', so: 2, ca: 7, soSteps: 20, caSteps: 19 },
      { model: 'fair', so: 4, ca: 7, soSteps: 20, caSteps: 17 },
      { model: 'good', so: 6, ca: 8, soSteps: 20, caSteps: 14 },
      { model: 'best', so: 8, ca: 9, soSteps: 20, caSteps: 10 },
    ];
    const all = plan.flatMap((p) =>
      Array.from({ length: 10 }, (_, i) => [run(p.model, 'symptom-only', `b${i}`, 0, i < p.so, p.soSteps), run(p.model, 'context-augmented', `b${i}`, 0, i < p.ca, p.caSteps)]).flat(),
    );
    const a = asymmetry(plan.map((p) => efficiencyLift(p.model, all.filter((r) => r.actor.kind === 'agent' && r.actor.model === p.model), 1, 200)));
    assert.deepEqual(
      a.models.map((m) => [m.model, m.symptomOnlyRate, Math.round(m.rateLift * 10) / 10, m.efficiencyLift]),
      [
        ['weak', 0.2, 0.5, 0.05],
        ['fair', 0.4, 0.3, 0.15],
        ['good', 0.6, 0.2, 0.3],
        ['best', 0.8, 0.1, 0.5],
      ],
    );
    assert.equal(a.rateLift?.rho, -1);
    assert.equal(a.efficiencyLift?.rho, 1);

    const report = Report.parse(buildReport({ files: ['x'], attempts: all, interactions: [], problems: [], conflicts: [], upgraded: 0 }, new Map(), new Date('2026-12-02T00:00:00Z'), { seed: 5, resamples: 200 }));
    assert.equal(report.efficiency.seed, 5);
    assert.equal(report.asymmetry.models.length, 4);
    const weak = report.lift.perModel.find((l) => l.model === 'weak');
    assert.deepEqual(weak?.mcnemar, { pairs: 10, symptomOnlyOnly: 0, contextOnly: 5, p: 2 / 32 });
    const html = reportPage(report);
    assert.match(html, /<h2>Efficiency lift<\/h2>.*seed 5/s);
    assert.match(html, /<h2>Rate against efficiency<\/h2>.*baseline against rate lift: -1\.00/s);
  });
});
