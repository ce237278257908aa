import { z } from 'zod';
import { Event, EventKind, Level } from './event';

/**
 * An event as a line of a file may hold it: the runtime writes events without `id`
 * (the collector numbers them), so the id is optional here and the store gives one.
 */
export const EventRecord = Event.extend({ id: z.string().optional() });
export type EventRecord = z.infer<typeof EventRecord>;

const KIND_SET: ReadonlySet<unknown> = new Set(EventKind.options);
const LEVEL_SET: ReadonlySet<unknown> = new Set(Level.options);
/** Counters live in Uint32Arrays. */
const MAX_COUNTER = 0xffffffff;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

function checkClock(vc: unknown): boolean {
  if (!isPlainObject(vc)) return false;
  for (const key in vc) {
    const count = vc[key];
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0 || count > MAX_COUNTER) return false;
  }
  return true;
}

function checkSpan(span: unknown): boolean {
  if (!isPlainObject(span)) return false;
  return (
    typeof span.traceId === 'string' &&
    typeof span.spanId === 'string' &&
    typeof span.name === 'string' &&
    optionalString(span.parentId) &&
    (span.end === undefined || typeof span.end === 'number')
  );
}

function checkSource(src: unknown): boolean {
  return isPlainObject(src) && typeof src.file === 'string' && typeof src.line === 'number' && Number.isInteger(src.line) && src.line > 0;
}

/**
 * A fast structural check of a parsed line, equivalent to `EventRecord` for what
 * the store keeps. Running zod on each of a million lines costs seconds; this costs
 * a few property reads, and zod runs only on the lines that fail it, to say why.
 */
export function isEventRecord(value: unknown): value is EventRecord {
  if (!isPlainObject(value)) return false;
  const v = value;
  return (
    typeof v.ts === 'number' &&
    typeof v.node === 'string' &&
    KIND_SET.has(v.kind) &&
    optionalString(v.id) &&
    optionalString(v.msg) &&
    optionalString(v.msgId) &&
    optionalString(v.peer) &&
    (v.level === undefined || LEVEL_SET.has(v.level)) &&
    (v.vc === undefined || checkClock(v.vc)) &&
    (v.span === undefined || checkSpan(v.span)) &&
    (v.src === undefined || checkSource(v.src)) &&
    (v.fields === undefined || isPlainObject(v.fields))
  );
}

const EXAMPLE = '{"ts":1200,"node":"n1","kind":"log","level":"info","msg":"became leader"}';

/** Why a parsed line is not an event, in words a user can act on. */
export function whyNotEventRecord(value: unknown): string {
  if (!isPlainObject(value)) return `expected an event object like ${EXAMPLE}, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`;
  const parsed = EventRecord.safeParse(value);
  if (parsed.success) return `a vector-clock counter is above ${MAX_COUNTER}`;
  const issues = parsed.error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join('.') : 'event';
    const at = issue.path.reduce<unknown>((v, key) => (isPlainObject(v) ? v[String(key)] : undefined), value);
    return at === undefined ? `${where} is missing (${issue.message.replace(/, received undefined$/, '')})` : `${where}: ${issue.message}`;
  });
  return `not an event (${issues.join('; ')}); expected an object like ${EXAMPLE}`;
}

/** The event of a record, with only the event's own properties, numbered `defaultId` if it had no id. */
export function toEvent(record: EventRecord, defaultId: string): Event {
  const e: Event = { id: record.id ?? defaultId, ts: record.ts, node: record.node, kind: record.kind };
  if (record.level !== undefined) e.level = record.level;
  if (record.msg !== undefined) e.msg = record.msg;
  if (record.msgId !== undefined) e.msgId = record.msgId;
  if (record.peer !== undefined) e.peer = record.peer;
  if (record.vc !== undefined) e.vc = record.vc;
  if (record.span !== undefined) {
    const { traceId, spanId, parentId, name, end } = record.span;
    e.span = { traceId, spanId, name, ...(parentId !== undefined && { parentId }), ...(end !== undefined && { end }) };
  }
  if (record.src !== undefined) e.src = { file: record.src.file, line: record.src.line };
  if (record.fields !== undefined) e.fields = record.fields;
  return e;
}
