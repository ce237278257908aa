import { strict as assert } from 'node:assert';
import { detailsLine, failedCheckLine, failedChecks, movedChecks } from '../../src/core/verify/checks';
import type { TrialResult } from '../../src/core/scenario/verdict';
import type { SimTrialResult } from '../../src/core/sim/sim-trial';
import {
  countsLine,
  countsOf,
  failedSeedLine,
  reproducerLines,
  reproducerSummary,
  seedsProgress,
  simVerificationLines,
  trialDetailLines,
  trialLabel,
  trialLine,
  trialName,
  trialsLine,
  trialsProgress,
  trialTitle,
  validationLines,
} from '../../src/core/verify/format';
import type { ReproResult } from '../../src/core/verify/reproduce';
import type { SimSummary } from '../../src/core/verify/simulate';
import type { VerifyResult } from '../../src/core/verify/verify';

const trial = (index: number, verdict: TrialResult['verdict'], extra: Partial<TrialResult> = {}): TrialResult => ({
  index,
  scenario: 'lease-expiry',
  seed: 1 + index,
  verdict,
  durationMs: 2345,
  eventsFile: `/runs/repro-1/lease-expiry-${index}/events.jsonl`,
  ...extra,
});

const failing = trial(9, 'fail', { reason: 'invariant violated: mutual exclusion', violation: { check: 'mutual exclusion', details: { holders: ['B', 'C'] } } });

const summary = (seeds: number, failed: number, extra: Partial<SimSummary> = {}): SimSummary => ({
  scenario: 'lease-expiry',
  seeds,
  from: 1,
  failed,
  failureRate: failed / seeds,
  verdicts: { pass: seeds - failed, fail: failed, error: 0, timeout: 0 },
  failedSeeds: [],
  seedsPerSecond: 250,
  isolation: 'bwrap',
  ...extra,
});

const repro = (trials: TrialResult[], sim?: SimSummary): ReproResult => ({
  bugId: 'raftkv-x',
  runDir: '/runs/repro-1',
  scenario: 'lease-expiry',
  trials,
  passed: trials.filter((t) => t.verdict === 'pass').length,
  failed: trials.filter((t) => t.verdict !== 'pass').length,
  ...(sim && { sim }),
  failing: failedChecks([{ scenario: 'lease-expiry', trials, passed: 0, failed: 0 }], sim ? [sim] : []),
  moved: [],
});

/** The wording of trials, seeds and verdicts that the CLI and the editor share. */
describe('verify/format: trial and verdict wording', () => {
  it('numbers trials from 1, with their seed, in every form', () => {
    assert.equal(trialName(failing), 'trial 10 (seed 10)');
    assert.equal(trialLabel(failing), 'lease-expiry trial 10 · seed 10');
    assert.equal(trialTitle(failing), 'lease-expiry trial 10 · seed 10 · fail: invariant violated: mutual exclusion');
    assert.equal(trialLine(failing), 'lease-expiry trial 10  FAIL     seed 10  2.3s  invariant violated: mutual exclusion');
    assert.equal(trialLine(trial(0, 'pass')), 'lease-expiry trial 1  PASS     seed 1  2.3s');
    assert.deepEqual(trialDetailLines(failing), ['violation: mutual exclusion {"holders":["B","C"]}', 'events: /runs/repro-1/lease-expiry-9/events.jsonl']);
    assert.deepEqual(trialDetailLines(trial(0, 'pass')), ['events: /runs/repro-1/lease-expiry-0/events.jsonl']);
  });

  it('counts live trials and simulated seeds, and says whether the bug reproduced', () => {
    const live = repro([trial(0, 'pass'), failing]);
    assert.equal(trialsLine('reproducer', live), 'reproducer: 1/2 passed, 1/2 failed (lease-expiry, live trials)');
    assert.equal(reproducerSummary(live), 'lease-expiry: live trials 1/2 passed, 1/2 failed — the bug reproduces ("mutual exclusion")');

    // Only a simulated seed failed: still a reproduction, and the summary counts both.
    const seeds = repro([trial(0, 'pass'), trial(1, 'pass')], summary(100, 3, { firstFailingSeed: 17, firstFailure: { verdict: 'fail', reason: 'two holders', virtualMs: 1200 } }));
    assert.equal(reproducerSummary(seeds), 'lease-expiry: live trials 2/2 passed, 0/2 failed; simulated seeds 97/100 passed, 3/100 failed — the bug reproduces ("failed")');
    assert.deepEqual(reproducerLines('reproducer', seeds), [
      'reproducer: 2/2 passed, 0/2 failed (lease-expiry, live trials)',
      'reproducer: 97/100 simulated seeds passed (lease-expiry, seeds from 1, 250 seeds/s); first failing seed 17: two holders',
    ]);
    assert.equal(reproducerSummary(repro([trial(0, 'pass')], summary(100, 0))), 'lease-expiry: live trials 1/1 passed, 0/1 failed; simulated seeds 100/100 passed, 0/100 failed — the reproducer passes');
  });

  it('names each failed check once, in plain words, with where it first failed', () => {
    const other = trial(3, 'fail', { reason: 'no progress', violation: { check: 'progress: a leader is elected', details: { timeoutMs: 5000 } } });
    const sim = summary(100, 4, { firstFailingSeed: 17, firstFailure: { verdict: 'fail', virtualMs: 1, violation: { check: 'mutual exclusion', details: { holders: ['A', 'C'] } } } });
    const checks = failedChecks([{ scenario: 'lease-expiry', trials: [trial(0, 'pass'), failing, other, trial(5, 'timeout', { reason: 'past 20000 ms' })], passed: 1, failed: 3 }], [sim]);
    assert.deepEqual(
      checks.map((c) => [c.check, c.count]),
      [['mutual exclusion', 5], ['progress: a leader is elected', 1], ['timed out', 1]],
    );
    assert.equal(checks[0]!.summary, 'mutual exclusion — holders: ["B","C"]');
    assert.equal(failedCheckLine(checks[0]!), 'lease-expiry · mutual exclusion — holders: ["B","C"] (5 failed; first: trial 10, seed 10)');
    assert.equal(failedCheckLine(checks[2]!), 'lease-expiry · timed out — past 20000 ms (1 failed; first: trial 6, seed 6)');
    assert.equal(detailsLine({ text: 'x'.repeat(300) }).length, 140);
  });

  it("says when a change moved the failure to a check the bug's own code passes", () => {
    const other = trial(1, 'fail', { violation: { check: 'progress: a leader is elected', details: {} } });
    const now = failedChecks([{ scenario: 'lease-expiry', trials: [other], passed: 0, failed: 1 }]);
    assert.deepEqual(movedChecks(now, ['mutual exclusion']).map((c) => c.check), ['progress: a leader is elected']);
    assert.deepEqual(movedChecks(now, ['progress: a leader is elected']), []);
    assert.deepEqual(movedChecks(now, []), [], 'nothing known of the bug: nothing said');
    const r = { ...repro([other]), moved: now };
    assert.equal(reproducerSummary(r), 'lease-expiry: live trials 0/1 passed, 1/1 failed — your change moved the failure: now "progress: a leader is elected" fails, which the bug\'s own code does not');
  });

  it('words progress and failing seeds by phase', () => {
    assert.equal(trialsProgress(3, 5, 1), 'live trials 3/5 · 1 failed');
    assert.equal(seedsProgress('code', 40, 100, 2), 'simulated runs of the code 40/100 · 2 failed');
    assert.equal(seedsProgress('buggy', 1, 100, 0), "first, how often the bug's own code fails: simulated runs 1/100 · 0 failed");
    assert.equal(seedsProgress('fixed', 7, 300, 0), 'simulated runs of the fix 7/300 · 0 failed');
    const seed: SimTrialResult = { scenario: 'lease-expiry', seed: 7, verdict: 'fail', reason: 'two holders', virtualMs: 1234, events: 10, steps: 10, decisions: 5, durationMs: 3 };
    assert.equal(failedSeedLine('fixed', seed), 'simulation, fixed code seed 7: FAIL at 1.234 s virtual  two holders');
  });

  it('words a verification the same from its result and from its study record', () => {
    const sim = { buggy: summary(100, 40), required: 6, fixed: summary(6, 0), passed: true };
    const result: VerifyResult = {
      ...repro([trial(0, 'pass')]),
      verified: true,
      regression: [{ scenario: 'failover', trials: [trial(0, 'pass')], passed: 1, failed: 0 }],
      patch: { files: ['src/lock.js'], fuzz: 0, diff: '' },
      sim,
    };
    const counts = countsLine(countsOf(result));
    assert.equal(counts, 'reproducer 1/1, regression failover 1/1, simulated seeds 6/6');
    assert.equal(countsLine({ reproducer: { passed: 1, total: 1 }, regression: [{ scenario: 'failover', passed: 1, total: 1 }], sim: { seeds: 6, failed: 0, required: 6 } }), counts);
    assert.deepEqual(simVerificationLines(sim), [
      'simulation, buggy code: fails 40% of 100 seeds (250 seeds/s); the fix must pass 6 seeds for 95% confidence',
      'simulation, fixed code: 6/6 simulated seeds passed (lease-expiry, seeds from 1, 250 seeds/s)',
    ]);
    const v = validationLines({ bugId: 'raftkv-x', ok: false, buggyFailureRate: 0.005, buggy: repro([trial(0, 'pass')]), fixed: repro([trial(0, 'pass')]), regression: [], problems: ['too rare'] });
    assert.deepEqual(v, ['raftkv-x: FAILED — buggy fails 0.50% (0/1), fixed passes 1/1', '  problem: too rare']);
  });
});
