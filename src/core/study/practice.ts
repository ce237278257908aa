import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { DDBENCH_DIR } from '../paths';
import type { AttemptRecord } from './schema';

/**
 * The practice log: what a person did in a workspace outside any study attempt — hints
 * taken, the reference fix revealed, fixes verified. Study attempts keep these in their
 * own records; this log is what the Bugs view's status and `ddbench hint` read outside
 * them. JSONL under `.ddbench/`, which no agent tool can see; it holds hint levels,
 * never hint text.
 */
export const PRACTICE_FILE = 'practice.jsonl';

const Iso = z.iso.datetime({ offset: true });

export const PracticeEvent = z.discriminatedUnion('kind', [
  z.strictObject({ v: z.literal(1), at: Iso, kind: z.literal('hint'), level: z.number().int().min(1) }),
  z.strictObject({ v: z.literal(1), at: Iso, kind: z.literal('reference') }),
  /** A fix verified outside an attempt: the verdict and the checks that failed (scenario names). */
  z.strictObject({ v: z.literal(1), at: Iso, kind: z.literal('verify'), verified: z.boolean(), failing: z.array(z.string()) }),
]);
export type PracticeEvent = z.infer<typeof PracticeEvent>;

export function practiceFile(workspaceDir: string): string {
  return path.join(workspaceDir, DDBENCH_DIR, PRACTICE_FILE);
}

export interface PracticeLog {
  events: PracticeEvent[];
  /** Lines that were not practice events (a torn write, a hand edit): skipped, counted, never fatal. */
  skipped: number;
}

export function readPractice(workspaceDir: string): PracticeLog {
  const file = practiceFile(workspaceDir);
  if (!fs.existsSync(file)) return { events: [], skipped: 0 };
  const log: PracticeLog = { events: [], skipped: 0 };
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      log.skipped++;
      continue;
    }
    const event = PracticeEvent.safeParse(parsed);
    if (event.success) log.events.push(event.data);
    else log.skipped++;
  }
  return log;
}

/** Appends one event; a line is checked against the schema first, so only valid lines are written. */
export function appendPractice(workspaceDir: string, event: PracticeEvent): void {
  const file = practiceFile(workspaceDir);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.appendFileSync(file, JSON.stringify(PracticeEvent.parse(event)) + '\n');
}

/** The most hints taken in a workspace: the highest level in its practice log, or in any of its attempts. */
export function hintsTaken(log: PracticeLog, attempts: readonly AttemptRecord[]): number {
  const practice = log.events.reduce((n, e) => (e.kind === 'hint' ? Math.max(n, e.level) : n), 0);
  return attempts.reduce((n, a) => Math.max(n, a.hints.length), practice);
}
