import type { TrialsResult } from '../repro/trials';
import type { VerifyResult } from '../verify/verify';
import { patchStat } from './patch-metrics';
import type { CheckRun, Verification } from './schema';

/** A verification as a record keeps it: verdicts and seeds, not the events (those stay in the run folder). */
export function verificationOf(r: VerifyResult, at: Date, startedAt: Date): Verification {
  return {
    at: at.toISOString(),
    elapsedMs: Math.max(0, at.getTime() - startedAt.getTime()),
    verified: r.verified,
    patch: patchStat(r.patch.diff),
    reproducer: checkOf(r),
    regression: r.regression.map(checkOf),
    ...(r.sim && {
      sim: {
        from: r.sim.fixed.from,
        seeds: r.sim.fixed.seeds,
        failed: r.sim.fixed.failed,
        required: r.sim.required,
        buggyFailureRate: r.sim.buggy.failureRate,
        ...(r.sim.fixed.firstFailingSeed !== undefined && { firstFailingSeed: r.sim.fixed.firstFailingSeed }),
      },
    }),
    ...(r.isolation !== undefined && { isolation: r.isolation }),
    failing: r.failing.map((c) => ({ scenario: c.scenario, check: c.check, summary: c.summary, moved: r.moved.includes(c) })),
  };
}

/** A fix that could not be checked at all (it did not apply, the run broke) still counts as a submission. */
export function failedVerification(diff: string, error: string, at: Date, startedAt: Date): Verification {
  return { at: at.toISOString(), elapsedMs: Math.max(0, at.getTime() - startedAt.getTime()), verified: false, patch: patchStat(diff), regression: [], error };
}

function checkOf(t: TrialsResult): CheckRun {
  return { scenario: t.scenario, passed: t.passed, total: t.trials.length, trials: t.trials.map((x) => ({ seed: x.seed, verdict: x.verdict })) };
}
