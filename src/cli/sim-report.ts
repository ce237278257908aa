import type { Decision } from '../core/sim/decisions';
import type { ShrunkSchedule } from '../core/sim/shrink';
import type { SimTrialResult } from '../core/sim/sim-trial';
import { failedSeedLine, seedsProgress, type SimPhase } from '../core/verify/format';
import { progress, say } from './output';

const LISTED_FAILURES = 10;

/**
 * Progress of a seed search on stderr: the first failing seeds, and a count now and
 * then, so a thousand seeds do not print a thousand lines.
 */
export function simProgress(phase: SimPhase, { listFailures = true } = {}): (r: SimTrialResult, done: number, total: number) => void {
  let failed = 0;
  return (r, done, total) => {
    if (r.verdict !== 'pass') failed++;
    if (r.verdict !== 'pass' && listFailures && failed <= LISTED_FAILURES) progress(`  ${failedSeedLine(phase, r)}`);
    if (done === total || done % Math.max(1, Math.ceil(total / 10)) === 0) progress(`  ${seedsProgress(phase, done, total, failed)}`);
  };
}

/** Progress of a check's seed searches: the buggy code's measurement by counts, the code under test with every failure. */
export function checkSimProgress(): (phase: SimPhase, r: SimTrialResult, done: number, total: number) => void {
  const searches = { code: simProgress('code'), buggy: simProgress('buggy', { listFailures: false }), fixed: simProgress('fixed') };
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
