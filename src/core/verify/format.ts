import type { TrialsResult } from '../repro/trials';
import type { FailedCheck } from './checks';
import type { TrialResult } from '../scenario/verdict';
import type { SimTrialResult } from '../sim/sim-trial';
import type { ReproResult } from './reproduce';
import type { SimCheckOptions, SimSummary, SimVerification } from './simulate';
import type { ValidationResult } from './validate';
import type { VerifyResult } from './verify';

/*
 * How trials, seeds and verdicts are worded for people, the same in the terminal and
 * in the editor: pure functions from results to lines.
 */

/** A trial as people count it: from 1, with its seed. Its index (and its folder, <scenario>-<index>) counts from 0. */
export function trialName(t: Pick<TrialResult, 'index' | 'seed'>): string {
  return `trial ${t.index + 1} (seed ${t.seed})`;
}

/** A trial among others (the run picker): "<scenario> trial 1 · seed 1". */
export function trialLabel(t: Pick<TrialResult, 'index' | 'seed' | 'scenario'>): string {
  return `${t.scenario} trial ${t.index + 1} · seed ${t.seed}`;
}

/** A trial folder's title (the timeline's tab): "<scenario> trial 1 · seed 1 · fail: why". */
export function trialTitle(t: Pick<TrialResult, 'index' | 'seed' | 'scenario' | 'reason'> & { verdict: string }): string {
  return `${trialLabel(t)} · ${t.verdict}${t.reason !== undefined ? `: ${t.reason}` : ''}`;
}

/** One line per finished trial: "<scenario> trial 1  FAIL     seed 1  2.3s  why". */
export function trialLine(t: TrialResult): string {
  return `${t.scenario} trial ${t.index + 1}  ${t.verdict.toUpperCase().padEnd(7)}  seed ${t.seed}  ${(t.durationMs / 1000).toFixed(1)}s${t.reason ? `  ${t.reason}` : ''}`;
}

/** What a trial left behind: the violated check and its details, and its events file. */
export function trialDetailLines(t: TrialResult): string[] {
  return [...(t.violation ? [`violation: ${t.violation.check} ${JSON.stringify(t.violation.details)}`] : []), `events: ${t.eventsFile}`];
}

export function trialsLine(label: string, r: TrialsResult): string {
  const n = r.trials.length;
  return `${label}: ${r.passed}/${n} passed, ${r.failed}/${n} failed (${r.scenario}, live trials)`;
}

/** Live trials done so far, for a progress message. */
export function trialsProgress(done: number, total: number, failed: number): string {
  return `live trials ${done}/${total} · ${failed} failed`;
}

export type SimPhase = Parameters<NonNullable<SimCheckOptions['onSimSeed']>>[0];

/** Which seed search a phase is: the code under test, the buggy code measured, or the fix. */
export function simPhaseLabel(phase: SimPhase): string {
  return phase === 'code' ? 'simulation' : phase === 'buggy' ? 'simulation, buggy code' : 'simulation, fixed code';
}

/** What each phase of simulated runs is for, in a newcomer's words (progress messages). */
const PHASE_WORDS: Record<SimPhase, string> = {
  code: 'simulated runs of the code',
  buggy: "first, how often the bug's own code fails: simulated runs",
  fixed: 'simulated runs of the fix',
};

/** Simulated seeds done so far, for a progress message. */
export function seedsProgress(phase: SimPhase, done: number, total: number, failed: number): string {
  return `${PHASE_WORDS[phase]} ${done}/${total} · ${failed} failed`;
}

/** A failing simulated seed as it fails. */
export function failedSeedLine(phase: SimPhase, r: SimTrialResult): string {
  return `${simPhaseLabel(phase)} seed ${r.seed}: ${r.verdict.toUpperCase()} at ${(r.virtualMs / 1000).toFixed(3)} s virtual${r.reason ? `  ${r.reason}` : ''}`;
}

export function pct(x: number): string {
  return `${(x * 100).toFixed(x > 0 && x < 0.01 ? 2 : 0)}%`;
}

/** One line for a seed search: how many passed, the first failure, the speed. */
export function simLine(label: string, s: SimSummary): string {
  const first = s.firstFailingSeed === undefined ? '' : `; first failing seed ${s.firstFailingSeed}: ${s.firstFailure?.reason ?? s.firstFailure?.verdict ?? ''}`;
  return `${label}: ${s.seeds - s.failed}/${s.seeds} simulated seeds passed (${s.scenario}, seeds from ${s.from}, ${s.seedsPerSecond.toFixed(0)} seeds/s)${first}`;
}

export function simVerificationLines(v: SimVerification): string[] {
  return [
    `simulation, buggy code: fails ${pct(v.buggy.failureRate)} of ${v.buggy.seeds} seeds (${v.buggy.seedsPerSecond.toFixed(0)} seeds/s); the fix must pass ${v.required} seeds for 95% confidence`,
    simLine('simulation, fixed code', v.fixed),
  ];
}

/** The reproducer's run: its live trials, then its simulated seeds. */
export function reproducerLines(label: string, r: ReproResult): string[] {
  return [trialsLine(label, r), ...(r.sim ? [simLine(label, r.sim)] : [])];
}

/** Whether the bug showed: a live trial or a simulated seed failed. */
export function reproduced(r: ReproResult): boolean {
  return r.failed > 0 || (r.sim?.failed ?? 0) > 0;
}

/** The whole run in one line (a notification): live trials and simulated seeds, and what they mean. */
export function reproducerSummary(r: ReproResult): string {
  const n = r.trials.length;
  const sim = r.sim ? `; simulated seeds ${r.sim.seeds - r.sim.failed}/${r.sim.seeds} passed, ${r.sim.failed}/${r.sim.seeds} failed` : '';
  return `${r.scenario}: live trials ${r.passed}/${n} passed, ${r.failed}/${n} failed${sim} — ${reproducerVerdict(r)}`;
}

/** What a reproducer run means: the bug shows (and by which check), the failure moved to another check, or it passes. */
export function reproducerVerdict(r: Pick<ReproResult, 'failing' | 'moved'> & Parameters<typeof reproduced>[0]): string {
  if (!reproduced(r)) return 'the reproducer passes';
  if (r.moved.length > 0) return `your change moved the failure: now ${quoteChecks(r.moved)} fail${r.moved.length === 1 ? 's' : ''}, which the bug's own code does not`;
  return r.failing.length > 0 ? `the bug reproduces (${quoteChecks(r.failing)})` : 'the bug reproduces';
}

function quoteChecks(checks: readonly FailedCheck[]): string {
  return checks.map((c) => `"${c.check}"`).join(', ');
}

/** A verification's checks, one line each: the reproducer, each regression check, the simulation. */
export function verificationLines(r: VerifyResult, label = 'reproducer'): string[] {
  return [
    trialsLine(label, r),
    ...r.regression.map((g) => trialsLine('regression', g)),
    ...(r.sim ? simVerificationLines(r.sim) : []),
    ...(r.isolation !== undefined ? [`isolation: ${r.isolation} (docs/security.md)`] : []),
  ];
}

/** Passed counts of a verification, as a result or as a study record keeps them. */
export interface VerificationCounts {
  reproducer?: { passed: number; total: number };
  regression: readonly { scenario: string; passed: number; total: number }[];
  sim?: { seeds: number; failed: number; required?: number };
}

export function countsOf(r: VerifyResult): VerificationCounts {
  return {
    reproducer: { passed: r.passed, total: r.trials.length },
    regression: r.regression.map((g) => ({ scenario: g.scenario, passed: g.passed, total: g.trials.length })),
    ...(r.sim && { sim: { seeds: r.sim.fixed.seeds, failed: r.sim.fixed.failed, required: r.sim.required } }),
  };
}

/** "reproducer 3/3, regression failover 2/2, simulated seeds 100/100". */
export function countsLine(c: VerificationCounts): string {
  return [
    ...(c.reproducer ? [`reproducer ${c.reproducer.passed}/${c.reproducer.total}`] : []),
    ...c.regression.map((g) => `regression ${g.scenario} ${g.passed}/${g.total}`),
    ...(c.sim ? [`simulated seeds ${c.sim.seeds - c.sim.failed}/${c.sim.required ?? c.sim.seeds}`] : []),
  ].join(', ');
}

/** A bug's validation: the buggy and fixed code's live trials, the simulation, the regression checks, the problems. */
export function validationLines(r: ValidationResult): string[] {
  const sim = r.sim && `  simulation: buggy fails ${pct(r.sim.buggy.failureRate)} of seeds (${r.sim.buggy.failed}/${r.sim.buggy.seeds}), fixed passes ${r.sim.fixed.seeds - r.sim.fixed.failed}/${r.sim.required} seeds (${r.sim.fixed.seedsPerSecond.toFixed(0)} seeds/s)`;
  return [
    `${r.bugId}: ${r.ok ? 'OK' : 'FAILED'} — buggy fails ${pct(r.buggyFailureRate)} (${r.buggy.failed}/${r.buggy.trials.length}), fixed passes ${r.fixed.passed}/${r.fixed.trials.length}`,
    ...(sim ? [sim] : []),
    ...r.regression.map((g) => `  regression ${g.result.scenario} on the ${g.code} code: ${g.result.passed}/${g.result.trials.length} passed`),
    ...r.problems.map((p) => `  problem: ${p}`),
  ];
}
