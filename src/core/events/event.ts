import { z } from 'zod';

/** What an event records; one timeline lane per `node`. */
export const EventKind = z.enum(['log', 'send', 'recv', 'span', 'state', 'fault', 'check', 'proc']);
export type EventKind = z.infer<typeof EventKind>;

export const Level = z.enum(['debug', 'info', 'warn', 'error']);
export type Level = z.infer<typeof Level>;

export const VectorClock = z.record(z.string(), z.number().int().nonnegative());
export type VectorClock = z.infer<typeof VectorClock>;

export const SourceLocation = z.object({ file: z.string(), line: z.number().int().positive() });
export type SourceLocation = z.infer<typeof SourceLocation>;

export const Span = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentId: z.string().optional(),
  name: z.string(),
  end: z.number().optional(),
});

/**
 * The one event shape of every timeline source (runtime logs, router records, imported
 * logs and traces). `ts` is microseconds since the run started;
 * `node` is a node id, a client name, or `router` / `harness`.
 */
export const Event = z.object({
  id: z.string(),
  ts: z.number(),
  node: z.string(),
  kind: EventKind,
  level: Level.optional(),
  msg: z.string().optional(),
  msgId: z.string().optional(),
  peer: z.string().optional(),
  vc: VectorClock.optional(),
  span: Span.optional(),
  src: SourceLocation.optional(),
  fields: z.record(z.string(), z.unknown()).optional(),
});
export type Event = z.infer<typeof Event>;

/** An event before the collector has numbered it. */
export type EventInput = Omit<Event, 'id'>;
