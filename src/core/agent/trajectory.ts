import * as fs from 'node:fs';
import { z } from 'zod';
import { redact } from '../secrets';
import { AgentResult, Attempt } from './events';

/**
 * A run's trajectory: one JSON object per line, appended as the run goes, so a crash
 * loses nothing written before it. `t` is milliseconds since the run started.
 */
const Base = { t: z.number().int() };
const ToolCallRecord = z.object({ id: z.string(), name: z.string(), arguments: z.string() });

export const TrajectoryRecord = z.discriminatedUnion('type', [
  z.object({
    ...Base,
    type: z.literal('start'),
    time: z.string(),
    bugId: z.string(),
    workspace: z.string(),
    settings: z.record(z.string(), z.unknown()),
    tools: z.array(z.string()),
  }),
  z.object({ ...Base, type: z.literal('protocol'), protocol: z.enum(['tools', 'text']), reason: z.string() }),
  z.object({
    ...Base,
    type: z.literal('message'),
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    content: z.string(),
    toolCalls: z.array(ToolCallRecord).optional(),
    toolCallId: z.string().optional(),
    reasoning: z.string().optional(),
  }),
  z.object({
    ...Base,
    type: z.literal('usage'),
    step: z.number().int(),
    promptTokens: z.number().int(),
    completionTokens: z.number().int(),
    cachedPromptTokens: z.number().int(),
    estimated: z.boolean(),
    costUsd: z.number(),
    finishReason: z.string().nullable(),
    ms: z.number().int(),
  }),
  z.object({
    ...Base,
    type: z.literal('tool'),
    step: z.number().int(),
    id: z.string(),
    name: z.string(),
    arguments: z.string(),
    ok: z.boolean(),
    output: z.string(),
    data: z.record(z.string(), z.unknown()).optional(),
    ms: z.number().int(),
  }),
  z.object({ ...Base, type: z.literal('format-error'), step: z.number().int(), message: z.string() }),
  z.object({ ...Base, type: z.literal('retry'), attempt: z.number().int(), delayMs: z.number(), kind: z.string(), message: z.string() }),
  z.object({ ...Base, type: z.literal('attempt'), attempt: Attempt }),
  /** Written by the editor when a person accepts or rejects a proposed patch. */
  z.object({ ...Base, type: z.literal('review'), attempt: z.number().int(), decision: z.enum(['accepted', 'rejected']), edited: z.boolean(), time: z.string() }),
  z.object({ ...Base, type: z.literal('end'), result: AgentResult }),
]);
export type TrajectoryRecord = z.infer<typeof TrajectoryRecord>;

/** Records without their time; the writer stamps it. */
type Unstamped = TrajectoryRecord extends infer R ? (R extends TrajectoryRecord ? Omit<R, 't'> : never) : never;

export class TrajectoryWriter {
  private readonly started = Date.now();

  constructor(readonly file: string) {}

  /** Redacted (secrets.ts), in case a secret ever reaches a message. */
  write(record: Unstamped): void {
    fs.appendFileSync(this.file, redact(JSON.stringify({ ...record, t: Date.now() - this.started })) + '\n');
  }
}

/** Appends a record to a finished trajectory (the editor's review of a patch), timed from its start record. */
export function appendToTrajectory(file: string, record: Unstamped): void {
  const first = readTrajectory(file).records[0];
  const started = first?.type === 'start' ? Date.parse(first.time) : Date.now();
  fs.appendFileSync(file, redact(JSON.stringify({ ...record, t: Date.now() - started })) + '\n');
}

/** Reads a trajectory, each line checked; a bad line is reported with its number, never fatal. */
export function readTrajectory(file: string): { records: TrajectoryRecord[]; bad: { line: number; error: string }[] } {
  const records: TrajectoryRecord[] = [];
  const bad: { line: number; error: string }[] = [];
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      if (!text.trim()) return;
      try {
        const parsed = TrajectoryRecord.safeParse(JSON.parse(text));
        if (parsed.success) records.push(parsed.data);
        else bad.push({ line: i + 1, error: parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ') });
      } catch (err) {
        bad.push({ line: i + 1, error: (err as Error).message });
      }
    });
  return { records, bad };
}
