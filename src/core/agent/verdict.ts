import { formatEvent, trialEvidence } from '../repro/evidence';
import type { TrialsResult } from '../repro/trials';
import type { VerifyResult } from '../verify/verify';
import type { Attempt } from './events';
import { trialName } from '../verify/format';

/** One attempt's record from the verification result. */
export function attemptOf(n: number, r: VerifyResult, files: Attempt['files'], ms: number): Attempt {
  const trials = r.trials.map((t) => ({ scenario: t.scenario, index: t.index, seed: t.seed, verdict: t.verdict, ...(t.reason !== undefined && { reason: t.reason }) }));
  const regression = r.regression.map((g) => ({ scenario: g.scenario, passed: g.passed, total: g.trials.length }));
  const sim = r.sim && {
    from: r.sim.fixed.from,
    required: r.sim.required,
    seeds: r.sim.fixed.seeds,
    failed: r.sim.fixed.failed,
    buggyFailureRate: r.sim.buggy.failureRate,
    ...(r.sim.fixed.firstFailingSeed !== undefined && { firstFailingSeed: r.sim.fixed.firstFailingSeed }),
    ...(r.sim.fixed.firstFailure?.reason !== undefined && { reason: r.sim.fixed.firstFailure.reason }),
  };
  const parts = [
    `reproducer ${r.passed}/${r.trials.length}`,
    ...regression.map((g) => `${g.scenario} ${g.passed}/${g.total}`),
    ...(sim ? [`seeds ${sim.seeds - sim.failed}/${sim.required}`] : []),
  ];
  return {
    attempt: n,
    patch: r.patch.diff,
    files,
    verified: r.verified,
    summary: `${r.verified ? 'verified' : 'not verified'}: ${parts.join(', ')}`,
    reproducer: { passed: r.passed, total: r.trials.length, trials },
    regression,
    ...(sim && { sim }),
    ...(r.isolation !== undefined && { isolation: r.isolation }),
    runDir: r.runDir,
    ms,
  };
}

/**
 * The verdict as the model reads it. Both conditions learn which checks failed and
 * why; only the context-augmented one also gets the failing trial's key events.
 */
export async function verdictText(a: Attempt, r: VerifyResult | undefined, attemptsLeft: number, withEvidence: boolean): Promise<string> {
  if (a.error) return `Attempt ${a.attempt} could not be verified: ${a.error}\n${left(attemptsLeft)}`;
  if (!r) return `Attempt ${a.attempt}: ${a.summary}`;
  const seeds = a.sim ? `, and the fix passed all ${a.sim.required} simulated seeds` : '';
  if (a.verified) return `Attempt ${a.attempt}: VERIFIED. The reproducer passed ${r.passed}/${r.trials.length} trials, every regression check passed${seeds}. The run is over.`;
  const lines = [`Attempt ${a.attempt}: NOT VERIFIED.`, ...checkLines('reproducer', r), ...r.regression.flatMap((g) => checkLines('regression', g)), ...simLines(a.sim)];
  const failing = [r, ...r.regression].flatMap((g) => g.trials).find((t) => t.verdict !== 'pass');
  if (withEvidence && failing) {
    const ev = await trialEvidence(failing, 10);
    lines.push(`Key events of ${failing.scenario} ${trialName(failing)}:`, ...ev.events.map((e) => `  ${formatEvent(e).trim()}`));
  }
  lines.push(left(attemptsLeft));
  return lines.join('\n');
}

function checkLines(label: string, g: TrialsResult): string[] {
  const out = [`${label} ${g.scenario}: ${g.passed}/${g.trials.length} trials passed`];
  for (const t of g.trials) if (t.verdict !== 'pass') out.push(`  ${trialName(t)}: ${t.verdict.toUpperCase()}${t.reason ? ` — ${t.reason}` : ''}`);
  return out;
}

function simLines(sim: Attempt['sim']): string[] {
  if (!sim) return [];
  // A seed of the simulator is a whole schedule (deliveries, timer firings, faults): the same seed fails the same way every time.
  const head = `simulation: ${sim.seeds - sim.failed}/${sim.required} seeds passed (seeds ${sim.from}…; the buggy code fails ${Math.round(sim.buggyFailureRate * 100)}% of seeds)`;
  if (sim.firstFailingSeed === undefined) return [head];
  return [head, `  seed ${sim.firstFailingSeed}: FAIL${sim.reason ? ` — ${sim.reason}` : ''}`];
}

function left(n: number): string {
  return n > 0 ? `${n} attempt(s) left. Investigate further, change your working copy, and submit again.` : 'No attempts are left.';
}
