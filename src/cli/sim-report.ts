import type { Decision } from '../core/sim/decisions';
import type { ShrunkSchedule } from '../core/sim/shrink';
import type { SimTrialResult } from '../core/sim/sim-trial';
import type { SimSummary, SimVerification } from '../core/verify/simulate';
import { progress, say } from './output';

function pct(x: number): string {
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

const LISTED_FAILURES = 10;

/**
 * Progress of a seed search on stderr: the first failing seeds, and a count now and
 * then, so a thousand seeds do not print a thousand lines.
 */
export function simProgress(label: string, { listFailures = true } = {}): (r: SimTrialResult, done: number, total: number) => void {
  let failed = 0;
  return (r, done, total) => {
    if (r.verdict !== 'pass') failed++;
    if (r.verdict !== 'pass' && listFailures && failed <= LISTED_FAILURES) {
      progress(`  ${label} seed ${r.seed}: ${r.verdict.toUpperCase()} at ${(r.virtualMs / 1000).toFixed(3)} s virtual  ${r.reason ?? ''}`);
    }
    if (done === total || done % Math.max(1, Math.ceil(total / 10)) === 0) progress(`  ${label}: ${done}/${total} seeds, ${failed} failed`);
  };
}

/** Progress of a check's seed searches: the buggy code's measurement by counts, the code under test with every failure. */
export function checkSimProgress(): (phase: 'code' | 'buggy' | 'fixed', r: SimTrialResult, done: number, total: number) => void {
  const searches = {
    code: simProgress('simulation'),
    buggy: simProgress('simulation, buggy code', { listFailures: false }),
    fixed: simProgress('simulation, fixed code'),
  };
  return (phase, r, done, total) => searches[phase](r, done, total);
}

export function describeDecision(d: Decision): string {
  const at = `${(d.at / 1e6).toFixed(6)} s`;
  const value =
    d.kind === 'drop' || d.kind === 'duplicate' || d.kind === 'reorder'
      ? d.value === 1 ? 'yes' : 'no'
      : d.kind === 'fault-delay'
        ? `${d.value} ms`
        : `${d.value} µs`;
  return `#${d.index} at ${at}: ${d.kind} ${value} (fallback ${d.kind === 'fault-delay' ? `${d.fallback} ms` : d.fallback}) — ${d.subject}`;
}

export function printShrunk(s: ShrunkSchedule): void {
  say(`\nShrunk schedule of seed ${s.seed} (${s.runs} runs${s.minimal ? ', 1-minimal' : ', run budget spent: smaller, not proven minimal'}):`);
  say(`  still fails the same way: ${s.failure}`);
  say(`  non-default scheduler decisions: ${s.original.nonDefault} -> ${s.shrunk.nonDefault}; events ${s.original.events} -> ${s.shrunk.events}; virtual time ${(s.original.virtualMs / 1000).toFixed(3)} s -> ${(s.shrunk.virtualMs / 1000).toFixed(3)} s`);
  if (s.kept.length === 0) say('  no scheduler decision matters: with every delay at its minimum and every fault at its likelier outcome it still fails');
  else say('  the decisions that must keep their seeded value (every other takes its fallback):');
  for (const d of s.kept) say(`    ${describeDecision(d)}`);
}
