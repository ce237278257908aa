import type { TrialsResult } from '../core/repro/trials';
import type { TrialResult } from '../core/scenario/verdict';
import { formatEvent, trialEvidence } from '../core/repro/evidence';
import { trialLine, trialName } from '../core/verify/format';
import { progress, say } from './output';

/** Progress of live trials on stderr: one line per finished trial. */
export function trialProgress(indent = ''): (t: TrialResult, done: number, total: number) => void {
  return (t, done, total) => progress(`${indent}[${done}/${total}] ${trialLine(t)}`);
}

/** Prints the evidence of the first trial that did not pass: its violation and key events. */
export async function printFirstFailure(r: TrialsResult, maxEvents = 12): Promise<void> {
  const first = r.trials.find((t) => t.verdict !== 'pass');
  if (!first) return;
  const ev = await trialEvidence(first, maxEvents);
  say(`\nEvidence from ${trialName(first)}:`);
  say(`  ${ev.headline}`);
  for (const e of ev.events) say(`  ${formatEvent(e)}`);
  say(`  all ${ev.totalEvents} events: ${ev.eventsFile}`);
}
