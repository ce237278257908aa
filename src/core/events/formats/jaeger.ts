import { z } from 'zod';
import type { SourceSink } from '../build';
import type { EventRecord } from '../record';
import { addRecords, forEachDocument, SkippedSpans } from './span-json';

/**
 * Jaeger's JSON as its UI downloads a trace and its query API (api/traces) answers:
 * `{"data": [trace, …]}`, one trace `{traceID, spans, processes}`, or an array of
 * traces. Times are epoch microseconds; each span's process (by `processID`, or
 * inline) names its service, which is the timeline lane. The first CHILD_OF
 * reference of the same trace is the parent; other references become the span's
 * `references` field.
 */

const Tag = z.object({ key: z.string(), type: z.string().optional(), value: z.unknown() });
const Process = z.object({ serviceName: z.string(), tags: z.array(Tag).nullish() });
const Reference = z.object({ refType: z.string(), traceID: z.string(), spanID: z.string() });
const Span = z.object({
  traceID: z.string(),
  spanID: z.string(),
  operationName: z.string(),
  references: z.array(Reference).nullish(),
  startTime: z.number(),
  duration: z.number().nullish(),
  tags: z.array(Tag).nullish(),
  logs: z.array(z.object({ timestamp: z.number(), fields: z.array(Tag).nullish() })).nullish(),
  processID: z.string().nullish(),
  process: Process.nullish(),
});
type Span = z.infer<typeof Span>;
const Trace = z.object({ traceID: z.string().optional(), spans: z.array(z.unknown()), processes: z.record(z.string(), Process).nullish() });
type Trace = z.infer<typeof Trace>;

/** Whether a JSON value looks like one of Jaeger's documents (for format detection). */
export function isJaegerDocument(value: unknown): boolean {
  const looksLikeTrace = (v: unknown): boolean => typeof v === 'object' && v !== null && 'spans' in v && ('processes' in v || 'traceID' in v);
  if (Array.isArray(value)) return value.length > 0 && looksLikeTrace(value[0]);
  if (typeof value !== 'object' || value === null) return false;
  if ('data' in value && Array.isArray(value.data)) return value.data.length > 0 && looksLikeTrace(value.data[0]);
  return looksLikeTrace(value);
}

function tagMap(tags: readonly z.infer<typeof Tag>[] | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const t of tags ?? []) out[t.key] = t.value;
  return out;
}

function traceRecords(trace: Trace, sink: SourceSink, skipped: SkippedSpans): EventRecord[] {
  const records: EventRecord[] = [];
  for (const raw of trace.spans) {
    const parsed = Span.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      skipped.add(`${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'not a span'}`);
      continue;
    }
    records.push(...spanRecords(parsed.data, trace, sink));
  }
  return records;
}

function spanRecords(span: Span, trace: Trace, sink: SourceSink): EventRecord[] {
  const process = span.process ?? (span.processID !== undefined && span.processID !== null ? trace.processes?.[span.processID] : undefined);
  const node = process?.serviceName ?? 'unknown_service';
  const refs = span.references ?? [];
  const parent = refs.find((r) => r.refType === 'CHILD_OF' && r.traceID === span.traceID) ?? refs.find((r) => r.traceID === span.traceID);
  const fields = tagMap(span.tags);
  const others = refs.filter((r) => r !== parent);
  if (others.length > 0) fields.references = others;
  const start = span.startTime;
  const error = fields.error === true || fields.error === 'true';
  const records: EventRecord[] = [
    {
      ts: sink.fromEpoch(start),
      node,
      kind: 'span',
      msg: span.operationName,
      ...(error && { level: 'error' as const }),
      span: {
        traceId: span.traceID,
        spanId: span.spanID,
        name: span.operationName,
        ...(parent !== undefined && { parentId: parent.spanID }),
        ...(span.duration !== undefined && span.duration !== null && { end: sink.fromEpoch(start + span.duration) }),
      },
      ...(Object.keys(fields).length > 0 && { fields }),
    },
  ];
  for (const log of span.logs ?? []) {
    const logFields = tagMap(log.fields);
    const text = logFields.event ?? logFields.message ?? Object.values(logFields)[0] ?? '';
    records.push({ ts: sink.fromEpoch(log.timestamp), node, kind: 'log', msg: typeof text === 'string' ? text : JSON.stringify(text), fields: { ...logFields, traceId: span.traceID, spanId: span.spanID } });
  }
  return records;
}

export async function readJaegerJson(file: string, sink: SourceSink): Promise<void> {
  await forEachDocument(file, 'Jaeger JSON ({"data": [traces]} or a trace with spans and processes)', sink, (value, lineNo) => {
    const list: unknown[] = Array.isArray(value) ? value : typeof value === 'object' && value !== null && 'data' in value && Array.isArray(value.data) ? value.data : [value];
    const skipped = new SkippedSpans();
    const records: EventRecord[] = [];
    for (const item of list) {
      const trace = Trace.safeParse(item);
      if (!trace.success) {
        const issue = trace.error.issues[0];
        sink.bad(lineNo, `not a Jaeger trace (${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''}); expected {"traceID", "spans", "processes"}`);
        continue;
      }
      records.push(...traceRecords(trace.data, sink, skipped));
    }
    skipped.report(sink, lineNo, 'Jaeger');
    addRecords(sink, records, lineNo);
  });
}
