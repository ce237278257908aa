import type { TrialsResult } from '../core/repro/trials';
import type { TrialResult } from '../core/scenario/verdict';
import { formatEvent, trialEvidence } from '../core/repro/evidence';
import { say } from './output';

export function trialLine(t: TrialResult): string {
  const v = t.verdict === 'pass' ? 'pass   ' : t.verdict.toUpperCase().padEnd(7);
  return `  ${t.scenario} #${t.index} seed ${t.seed}  ${v} ${(t.durationMs / 1000).toFixed(1)}s${t.reason ? `  ${t.reason}` : ''}`;
}

export function summaryLine(label: string, r: TrialsResult): string {
  return `${label}: ${r.passed}/${r.trials.length} trials passed (${r.scenario})`;
}

/** Prints the evidence of the first trial that did not pass: its violation and key events. */
export async function printFirstFailure(r: TrialsResult, maxEvents = 12): Promise<void> {
  const first = r.trials.find((t) => t.verdict !== 'pass');
  if (!first) return;
  const ev = await trialEvidence(first, maxEvents);
  say(`\nEvidence from trial #${first.index} (seed ${first.seed}):`);
  say(`  ${ev.headline}`);
  for (const e of ev.events) say(`  ${formatEvent(e)}`);
  say(`  all ${ev.totalEvents} events: ${ev.eventsFile}`);
}
