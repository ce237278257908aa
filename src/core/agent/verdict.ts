import { formatEvent, trialEvidence } from '../repro/evidence';
import type { TrialsResult } from '../repro/runner';
import type { VerifyResult } from '../repro/verify';
import type { Attempt } from './events';

/** One attempt's record from the verification result. */
export function attemptOf(n: number, r: VerifyResult, files: Attempt['files'], ms: number): Attempt {
  const trials = r.trials.map((t) => ({ scenario: t.scenario, index: t.index, seed: t.seed, verdict: t.verdict, ...(t.reason !== undefined && { reason: t.reason }) }));
  const regression = r.regression.map((g) => ({ scenario: g.scenario, passed: g.passed, total: g.trials.length }));
  const parts = [`reproducer ${r.passed}/${r.trials.length}`, ...regression.map((g) => `${g.scenario} ${g.passed}/${g.total}`)];
  return {
    attempt: n,
    patch: r.patch.diff,
    files,
    verified: r.verified,
    summary: `${r.verified ? 'verified' : 'not verified'}: ${parts.join(', ')}`,
    reproducer: { passed: r.passed, total: r.trials.length, trials },
    regression,
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
  if (a.verified) return `Attempt ${a.attempt}: VERIFIED. The reproducer passed ${r.passed}/${r.trials.length} trials and every regression check passed. The run is over.`;
  const lines = [`Attempt ${a.attempt}: NOT VERIFIED.`, ...checkLines('reproducer', r), ...r.regression.flatMap((g) => checkLines('regression', g))];
  const failing = [r, ...r.regression].flatMap((g) => g.trials).find((t) => t.verdict !== 'pass');
  if (withEvidence && failing) {
    const ev = await trialEvidence(failing, 10);
    lines.push(`Key events of ${failing.scenario} trial #${failing.index}:`, ...ev.events.map((e) => `  ${formatEvent(e).trim()}`));
  }
  lines.push(left(attemptsLeft));
  return lines.join('\n');
}

function checkLines(label: string, g: TrialsResult): string[] {
  const out = [`${label} ${g.scenario}: ${g.passed}/${g.trials.length} trials passed`];
  for (const t of g.trials) if (t.verdict !== 'pass') out.push(`  trial #${t.index} (seed ${t.seed}): ${t.verdict.toUpperCase()}${t.reason ? ` — ${t.reason}` : ''}`);
  return out;
}

function left(n: number): string {
  return n > 0 ? `${n} attempt(s) left. Investigate further, change your working copy, and submit again.` : 'No attempts are left.';
}
