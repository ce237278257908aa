import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { Event } from '../events/event';
import { UserError } from '../errors';
import type { TrialResult } from '../scenario/verdict';
import { redact } from '../secrets';
import type { Decision } from './decisions';
import { writeEventsFile } from './events-file';
import { SimOptions, type SimOptionsInput } from './options';
import { runSimTrial, type SimTrialResult } from './sim-trial';
import type { SimTarget } from './target';

/** A schedule to replay exactly: a seed, and (for a shrunk one) the draws that keep their seeded value. */
export const ScheduleFile = z.strictObject({
  scenario: z.string().min(1),
  seed: z.number().int(),
  keep: z.array(z.number().int().nonnegative()).optional(),
  sim: SimOptions.partial().optional(),
});
export type ScheduleFile = z.infer<typeof ScheduleFile>;

export interface ReplayOptions {
  /** The events.jsonl to write. */
  eventsFile: string;
  keep?: readonly number[];
  sim?: SimOptionsInput;
}

/** What a replay gives besides its events file. */
export interface ReplayRun {
  result: SimTrialResult;
  /** The failing check event, when the run failed on one. */
  failedCheck?: Event;
  /** The events just before the verdict: where it failed. */
  lastEvents: Event[];
  decisions: readonly Decision[];
}

export interface ReplayResult extends ReplayRun {
  eventsFile: string;
  /** SHA-256 of the events file: two replays of one schedule give the same. */
  digest: string;
}

const LAST_EVENTS = 12;

/** Replays one seed (or shrunk schedule) and writes its events for the timeline and the evidence tools. */
export async function replayRun(target: SimTarget, seed: number, opts: ReplayOptions): Promise<ReplayRun> {
  const { result, cluster } = await runSimTrial(target, {
    seed,
    sim: opts.sim,
    record: true,
    runDir: path.dirname(opts.eventsFile),
    ...(opts.keep && { keep: new Set(opts.keep) }),
  });
  const events = cluster.events();
  writeEventsFile(opts.eventsFile, events);
  const failedIndex = events.findIndex((e) => e.kind === 'check' && e.fields?.ok === false);
  const end = failedIndex >= 0 ? failedIndex : events.length;
  return {
    result,
    ...(failedIndex >= 0 && { failedCheck: events[failedIndex] }),
    lastEvents: events.slice(Math.max(0, end - LAST_EVENTS), end),
    decisions: cluster.decisionLog(),
  };
}

/** Writes a replay's trial.json beside its events: the live trial's record, so tools that read trial.json read replays too. */
export function writeReplayTrial(eventsFile: string, seed: number, result: SimTrialResult): void {
  const trial: TrialResult & { simulated: true; virtualMs: number } = {
    index: 0,
    scenario: result.scenario,
    seed,
    verdict: result.verdict,
    durationMs: result.durationMs,
    eventsFile,
    ...(result.reason !== undefined && { reason: result.reason }),
    ...(result.violation && { violation: result.violation }),
    simulated: true,
    virtualMs: result.virtualMs,
  };
  fs.writeFileSync(path.join(path.dirname(eventsFile), 'trial.json'), redact(JSON.stringify(trial, null, 2)) + '\n');
}

export function readScheduleFile(file: string): ScheduleFile {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UserError(`${file}: cannot read the schedule (${err instanceof Error ? err.message : String(err)})`);
  }
  const parsed = ScheduleFile.safeParse(raw);
  if (!parsed.success) throw new UserError(`${file}: not a schedule\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
