import type { Json } from '../../runtime/types';
import type { TrialsResult } from '../repro/trials';
import type { TrialResult, Verdict } from '../scenario/verdict';
import type { SimSummary } from './simulate';

/**
 * The checks a run failed, in plain words: each distinct check once, with a one-line
 * summary of its details and where it first failed (a live trial, with its events
 * file, or a simulated seed), so a result names what broke and links to it.
 */
export interface FailedCheck {
  /** The check's name as the scenario gave it (`progress: …` when the cluster stopped making progress). */
  check: string;
  /** The check and a one-line summary of its details. */
  summary: string;
  /** The scenario it belongs to (the reproducer or a regression check). */
  scenario: string;
  /** Live trials (or simulated seeds) that failed it. */
  count: number;
  /** The first live trial that failed it, if any: its number from 1, seed and events. */
  trial?: { index: number; seed: number; eventsFile: string };
  /** The first simulated seed that failed it, if no live trial did. */
  seed?: number;
}

const DETAIL_CHARS = 140;

/** What a failed run is called when no check was violated: it ran out of time, or broke. */
function checkName(verdict: Verdict, violation: TrialResult['violation'] | undefined): string {
  if (violation) return violation.check;
  return verdict === 'timeout' ? 'timed out' : verdict === 'error' ? 'the run broke' : 'failed';
}

function jsonLine(value: Json): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** "key: value, key: value", cut to one line. */
export function detailsLine(details: Record<string, Json>): string {
  const text = Object.entries(details)
    .map(([k, v]) => `${k}: ${jsonLine(v)}`)
    .join(', ');
  return text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS - 1)}…` : text;
}

function summaryOf(verdict: Verdict, violation: TrialResult['violation'] | undefined, reason: string | undefined): string {
  const name = checkName(verdict, violation);
  const details = violation ? detailsLine(violation.details) : (reason ?? '');
  return details ? `${name} — ${details}` : name;
}

/** The failed checks of live trials (any scenario) and, after them, of a seed search's first failure. */
export function failedChecks(runs: readonly TrialsResult[], sims: readonly SimSummary[] = []): FailedCheck[] {
  const byName = new Map<string, FailedCheck>();
  for (const run of runs) {
    for (const t of run.trials) {
      if (t.verdict === 'pass') continue;
      const check = checkName(t.verdict, t.violation);
      const seen = byName.get(check);
      if (seen) seen.count++;
      else byName.set(check, { check, summary: summaryOf(t.verdict, t.violation, t.reason), scenario: t.scenario, count: 1, trial: { index: t.index, seed: t.seed, eventsFile: t.eventsFile } });
    }
  }
  for (const s of sims) {
    const f = s.firstFailure;
    if (!f || s.firstFailingSeed === undefined) continue;
    const check = checkName(f.verdict, f.violation);
    const seen = byName.get(check);
    if (seen) seen.count += s.failed;
    else byName.set(check, { check, summary: summaryOf(f.verdict, f.violation, f.reason), scenario: s.scenario, count: s.failed, seed: s.firstFailingSeed });
  }
  return [...byName.values()];
}

/**
 * The checks that fail now but never failed on the bug's own code: a change that makes
 * another check fail has moved the failure, not fixed it. Empty when nothing moved.
 */
export function movedChecks(now: readonly FailedCheck[], onBuggyCode: readonly string[]): FailedCheck[] {
  if (onBuggyCode.length === 0) return [];
  const before = new Set(onBuggyCode);
  return now.filter((c) => !before.has(c.check));
}

/** One line per failed check for people: "reproducer · no-double-grant — holders: [a, b] (3 live trials; first: trial 2, seed 2)". */
export function failedCheckLine(c: FailedCheck): string {
  const where = c.trial ? `first: trial ${c.trial.index + 1}, seed ${c.trial.seed}` : `first: simulated seed ${c.seed}`;
  return `${c.scenario} · ${c.summary} (${c.count} failed; ${where})`;
}

/** Every failed check, one line each, the moved ones marked: the block the CLI and the editor's output print. */
export function failedCheckLines(r: { failing: readonly FailedCheck[]; moved: readonly FailedCheck[] }): string[] {
  if (r.failing.length === 0) return [];
  const moved = new Set(r.moved.map((c) => c.check));
  return [
    r.moved.length > 0 ? "failed checks (* fails now but not on the bug's own code: the change moved the failure):" : 'failed checks:',
    ...r.failing.map((c) => `  ${moved.has(c.check) ? '*' : '-'} ${failedCheckLine(c)}`),
  ];
}
