import type { Event } from '../events/event';
import { readEventsFile } from '../events/read';
import type { TrialResult } from '../scenario/verdict';

export interface Evidence {
  /** The violated check or the reason the trial did not pass. */
  headline: string;
  /** The faults injected, the warnings and errors, and the last events before the verdict. */
  events: Event[];
  eventsFile: string;
  totalEvents: number;
}

/** The few events a person reads first to see why a trial failed. */
export async function trialEvidence(trial: TrialResult, maxEvents = 12): Promise<Evidence> {
  const { events } = await readEventsFile(trial.eventsFile);
  const headline = trial.violation ? `${trial.violation.check} ${JSON.stringify(trial.violation.details)}` : (trial.reason ?? trial.verdict);
  const notable = events.filter(
    (e) => e.kind === 'fault' || e.kind === 'check' || (e.kind === 'proc' && /kill|restart|pause|resume|exit/.test(e.msg ?? '')) || e.level === 'warn' || e.level === 'error' || e.node === 'harness',
  );
  return { headline, events: notable.slice(-maxEvents), eventsFile: trial.eventsFile, totalEvents: events.length };
}

export function formatEvent(e: Event): string {
  const t = (e.ts / 1e6).toFixed(3).padStart(8);
  const what = e.msg ?? '';
  const extra = e.peer ? ` ${e.kind === 'send' ? '→' : '←'} ${e.peer}` : '';
  const fields = e.fields && Object.keys(e.fields).length ? ` ${JSON.stringify(e.fields)}` : '';
  return `${t}s ${e.node.padEnd(8)} ${e.kind.padEnd(5)} ${what}${extra}${fields}`;
}
