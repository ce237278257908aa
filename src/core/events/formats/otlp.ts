import { z } from 'zod';
import type { SourceSink } from '../build';
import type { Level } from '../event';
import { forEachJsonValue, forEachLine } from '../lines';
import type { EventRecord } from '../record';

/**
 * OTLP/JSON as the OpenTelemetry collector's file exporter writes it: one
 * ExportTraceServiceRequest or ExportLogsServiceRequest per line (a pretty-printed
 * request body works too), and Jaeger's api/v3 answers, which wrap each request in
 * `{"result": …}`. OTLP/JSON differs from plain proto3 JSON: ids are hex, enums are
 * integers and 64-bit integers may be strings; unknown fields are ignored. Writers that
 * use plain proto3 JSON (Jaeger's api/v3, older SDKs) give enums by name
 * (`"STATUS_CODE_ERROR"`, `"SPAN_KIND_SERVER"`, `"SEVERITY_NUMBER_WARN"`), which are read as their numbers.
 */

type AnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
  bytesValue?: string;
};
type KeyValue = { key: string; value?: AnyValue };

const AnyValue: z.ZodType<AnyValue> = z.lazy(() =>
  z.object({
    stringValue: z.string().optional(),
    boolValue: z.boolean().optional(),
    intValue: z.union([z.string(), z.number()]).optional(),
    doubleValue: z.number().optional(),
    arrayValue: z.object({ values: z.array(AnyValue).optional() }).optional(),
    kvlistValue: z.object({ values: z.array(KeyValue).optional() }).optional(),
    bytesValue: z.string().optional(),
  }),
);
const KeyValue: z.ZodType<KeyValue> = z.lazy(() => z.object({ key: z.string(), value: AnyValue.optional() }));
const Attributes = z.array(KeyValue).optional();
const Nanos = z.union([z.string().regex(/^\d+$/, 'expected a whole number of nanoseconds'), z.number()]).optional();
const Resource = z.object({ attributes: Attributes }).optional();
const Scope = z.object({ name: z.string().optional() }).optional();

const SPAN_KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];
const STATUS_CODES = ['UNSET', 'OK', 'ERROR'];
const STATUS_ERROR = 2;
/** SEVERITY_NUMBER_TRACE = 1, TRACE2 … FATAL4 = 24, four per level. */
const SEVERITY_NUMBERS = ['UNSPECIFIED', ...['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'].flatMap((level) => [level, `${level}2`, `${level}3`, `${level}4`])];

/** A proto3 enum as OTLP/JSON writes it (a number) or as plain proto3 JSON does (`PREFIX_NAME`); an unknown name is undefined. */
function protoEnum(prefix: string, names: readonly string[]) {
  return z.union([
    z.number().int(),
    z.string().transform((name) => {
      const at = names.indexOf(name.startsWith(prefix) ? name.slice(prefix.length) : name);
      return at < 0 ? undefined : at;
    }),
  ]);
}

const Link = z.object({ traceId: z.string(), spanId: z.string(), attributes: Attributes });

const Span = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  kind: protoEnum('SPAN_KIND_', SPAN_KINDS).optional(),
  startTimeUnixNano: Nanos,
  endTimeUnixNano: Nanos,
  attributes: Attributes,
  events: z.array(z.object({ timeUnixNano: Nanos, name: z.string().optional(), attributes: Attributes })).optional(),
  status: z.object({ code: protoEnum('STATUS_CODE_', STATUS_CODES).optional(), message: z.string().optional() }).optional(),
  links: z.array(Link).optional(),
});
type Span = z.infer<typeof Span>;

const LogRecord = z.object({
  timeUnixNano: Nanos,
  observedTimeUnixNano: Nanos,
  severityNumber: protoEnum('SEVERITY_NUMBER_', SEVERITY_NUMBERS).optional(),
  severityText: z.string().optional(),
  body: AnyValue.optional(),
  attributes: Attributes,
  traceId: z.string().optional(),
  spanId: z.string().optional(),
  eventName: z.string().optional(),
});
type LogRecord = z.infer<typeof LogRecord>;

/** `instrumentationLibrary*` are the names before OTLP 0.15; old exporters still write them. */
/** Spans and log records are checked one by one (`requestRecords`), so one wrongly typed field costs its own span, not the request. */
const ScopeSpans = z.object({ scope: Scope, instrumentationLibrary: Scope, spans: z.array(z.unknown()).optional() });
const ScopeLogs = z.object({ scope: Scope, instrumentationLibrary: Scope, logRecords: z.array(z.unknown()).optional() });
const Request = z.object({
  resourceSpans: z
    .array(z.object({ resource: Resource, scopeSpans: z.array(ScopeSpans).optional(), instrumentationLibrarySpans: z.array(ScopeSpans).optional() }))
    .optional(),
  resourceLogs: z
    .array(z.object({ resource: Resource, scopeLogs: z.array(ScopeLogs).optional(), instrumentationLibraryLogs: z.array(ScopeLogs).optional() }))
    .optional(),
  resourceMetrics: z.array(z.unknown()).optional(),
});
type Request = z.infer<typeof Request>;

/** An AnyValue as plain JSON. */
function plain(value: AnyValue | undefined): unknown {
  if (value === undefined) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) {
    const n = Number(value.intValue);
    return Number.isSafeInteger(n) ? n : String(value.intValue);
  }
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plain);
  if (value.kvlistValue !== undefined) return attributes(value.kvlistValue.values);
  if (value.bytesValue !== undefined) return value.bytesValue;
  return null;
}

function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = plain(kv.value);
  return out;
}

/** Trace and span ids as lower-case hex; base64 ids (a known exporter bug) are converted. */
function normalizeId(id: string | undefined): string | undefined {
  if (id === undefined || id === '') return undefined;
  if (/^[0-9a-fA-F]+$/.test(id) && (id.length === 32 || id.length === 16)) return id.toLowerCase();
  const bytes = Buffer.from(id, 'base64');
  if ((bytes.length === 16 || bytes.length === 8) && /^[A-Za-z0-9+/]+=*$/.test(id)) return bytes.toString('hex');
  return id.toLowerCase();
}

function nanosToEpochUs(nanos: string | number | undefined): number | undefined {
  if (nanos === undefined) return undefined;
  const n = Number(nanos);
  return n > 0 ? n / 1000 : undefined;
}

/** OTLP severity numbers: 1-4 TRACE, 5-8 DEBUG, 9-12 INFO, 13-16 WARN, 17-20 ERROR, 21-24 FATAL. */
function levelOf(severity: number | undefined, text: string | undefined): Level | undefined {
  if (severity !== undefined && severity > 0) return severity <= 8 ? 'debug' : severity <= 12 ? 'info' : severity <= 16 ? 'warn' : 'error';
  const word = text?.toLowerCase();
  if (word === undefined) return undefined;
  if (word.startsWith('warn')) return 'warn';
  if (word.startsWith('err') || word.startsWith('fatal') || word.startsWith('crit')) return 'error';
  if (word.startsWith('info')) return 'info';
  if (word.startsWith('debug') || word.startsWith('trace')) return 'debug';
  return undefined;
}

/** The timeline node of a resource: its service, and its instance when it names one. */
function nodeOf(resource: z.infer<typeof Resource>): string {
  const attrs = attributes(resource?.attributes);
  const service = typeof attrs['service.name'] === 'string' ? attrs['service.name'] : 'unknown_service';
  const instance = attrs['service.instance.id'];
  return typeof instance === 'string' || typeof instance === 'number' ? `${service}/${instance}` : service;
}

function spanRecords(node: string, span: Span, sink: SourceSink): EventRecord[] {
  const start = nanosToEpochUs(span.startTimeUnixNano);
  const traceId = normalizeId(span.traceId) ?? '';
  const spanId = normalizeId(span.spanId) ?? '';
  if (start === undefined) return [];
  const end = nanosToEpochUs(span.endTimeUnixNano);
  const parentId = normalizeId(span.parentSpanId);
  const fields: Record<string, unknown> = attributes(span.attributes);
  if (span.kind !== undefined && span.kind > 0) fields['span.kind'] = SPAN_KINDS[span.kind] ?? span.kind;
  if (span.status?.message) fields['status.message'] = span.status.message;
  // A link is causality across traces (a batch consumer, a retried request): kept as a field, it draws an arrow (events/edges.ts).
  const links = (span.links ?? []).map((link) => ({
    traceId: normalizeId(link.traceId) ?? '',
    spanId: normalizeId(link.spanId) ?? '',
    ...(link.attributes !== undefined && link.attributes.length > 0 && { attributes: attributes(link.attributes) }),
  }));
  if (links.length > 0) fields.links = links;
  const records: EventRecord[] = [
    {
      ts: sink.fromEpoch(start),
      node,
      kind: 'span',
      msg: span.name,
      ...(span.status?.code === STATUS_ERROR && { level: 'error' as const }),
      span: { traceId, spanId, name: span.name, ...(parentId !== undefined && { parentId }), ...(end !== undefined && { end: sink.fromEpoch(end) }) },
      ...(Object.keys(fields).length > 0 && { fields }),
    },
  ];
  for (const event of span.events ?? []) {
    const at = nanosToEpochUs(event.timeUnixNano);
    if (at === undefined) continue;
    records.push({ ts: sink.fromEpoch(at), node, kind: 'log', msg: event.name ?? '', fields: { ...attributes(event.attributes), traceId, spanId } });
  }
  return records;
}

function logRecord(node: string, log: LogRecord, sink: SourceSink): EventRecord | undefined {
  const at = nanosToEpochUs(log.timeUnixNano) ?? nanosToEpochUs(log.observedTimeUnixNano);
  if (at === undefined) return undefined;
  const body = plain(log.body);
  const level = levelOf(log.severityNumber, log.severityText);
  const fields: Record<string, unknown> = attributes(log.attributes);
  const traceId = normalizeId(log.traceId);
  const spanId = normalizeId(log.spanId);
  if (traceId !== undefined) fields.traceId = traceId;
  if (spanId !== undefined) fields.spanId = spanId;
  if (log.eventName) fields.eventName = log.eventName;
  if (level === undefined && log.severityText) fields.severityText = log.severityText;
  return {
    ts: sink.fromEpoch(at),
    node,
    kind: 'log',
    ...(level !== undefined && { level }),
    msg: typeof body === 'string' ? body : body === null ? (log.eventName ?? '') : JSON.stringify(body),
    ...(Object.keys(fields).length > 0 && { fields }),
  };
}

interface Skipped {
  count: number;
  /** The first skipped item's problem, to show in the bad line. */
  first?: string;
}

/** Parses one span or log record; a wrong one is counted with its first problem. */
function item<T>(schema: z.ZodType<T>, value: unknown, what: string, skipped: Skipped): T | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  skipped.count++;
  const issue = parsed.error.issues[0];
  skipped.first ??= `${what}.${issue.path.join('.')}: ${issue.message}`;
  return undefined;
}

/** The events of one export request, in document order. */
function requestRecords(request: Request, sink: SourceSink): { records: EventRecord[]; untimed: number; skipped: Skipped } {
  const records: EventRecord[] = [];
  let untimed = 0;
  const skipped: Skipped = { count: 0 };
  for (const rs of request.resourceSpans ?? []) {
    const node = nodeOf(rs.resource);
    for (const scope of [...(rs.scopeSpans ?? []), ...(rs.instrumentationLibrarySpans ?? [])]) {
      for (const value of scope.spans ?? []) {
        const span = item(Span, value, 'span', skipped);
        if (span === undefined) continue;
        const out = spanRecords(node, span, sink);
        if (out.length === 0) untimed++;
        records.push(...out);
      }
    }
  }
  for (const rl of request.resourceLogs ?? []) {
    const node = nodeOf(rl.resource);
    for (const scope of [...(rl.scopeLogs ?? []), ...(rl.instrumentationLibraryLogs ?? [])]) {
      for (const value of scope.logRecords ?? []) {
        const log = item(LogRecord, value, 'logRecord', skipped);
        if (log === undefined) continue;
        const record = logRecord(node, log, sink);
        if (record === undefined) untimed++;
        else records.push(record);
      }
    }
  }
  return { records, untimed, skipped };
}

function addRequest(text: string, lineNo: number, sink: SourceSink, label: string): void {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    sink.bad(lineNo, `not JSON (${(err as Error).message}); expected one OTLP export request per line, {"resourceSpans":[…]} or {"resourceLogs":[…]}`);
    return;
  }
  // Jaeger's api/v3 (GET /api/v3/traces) answers with each export request inside `result`.
  const parsed = Request.safeParse(isJaegerResult(value) ? value.result : value);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`);
    sink.bad(lineNo, `not an OTLP export request (${issues.join('; ')})`);
    return;
  }
  const request = parsed.data;
  if (request.resourceSpans === undefined && request.resourceLogs === undefined) {
    sink.bad(lineNo, request.resourceMetrics !== undefined ? 'OTLP metrics are not timeline events; skipped' : 'expected resourceSpans or resourceLogs');
    return;
  }
  const { records, untimed, skipped } = requestRecords(request, sink);
  if (skipped.count > 0) sink.bad(lineNo, `${skipped.count} span(s) or log record(s) that are not OTLP were skipped, the rest of the request read (${skipped.first})`);
  if (untimed > 0) sink.bad(lineNo, `${untimed} span(s) or log record(s) without a time (startTimeUnixNano / timeUnixNano) were skipped`);
  records.forEach((record, k) => {
    const withId = { id: records.length === 1 ? `${label}:${lineNo}` : `${label}:${lineNo}.${k + 1}`, ...record };
    sink.add(withId, JSON.stringify(withId), lineNo);
  });
}

/** Whether a JSON value is Jaeger's api/v3 wrapper `{"result": {…}}` around an export request. */
export function isJaegerResult(value: unknown): value is { result: Record<string, unknown> } {
  if (typeof value !== 'object' || value === null || !('result' in value)) return false;
  const result: unknown = value.result;
  return typeof result === 'object' && result !== null && ('resourceSpans' in result || 'resourceLogs' in result);
}

/** Thrown to leave line mode when the file turns out to be one pretty-printed document. */
class NotLineDelimited extends Error {}

export async function readOtlpJson(file: string, sink: SourceSink, label: string): Promise<void> {
  let first = true;
  try {
    await forEachLine(file, (line, lineNo) => {
      if (line.trim() === '') return;
      if (first) {
        first = false;
        if (!isJson(line)) throw new NotLineDelimited();
      }
      addRequest(line, lineNo, sink, label);
    });
  } catch (err) {
    if (!(err instanceof NotLineDelimited)) throw err;
    await forEachJsonValue(
      file,
      'values',
      (text, lineNo) => addRequest(text, lineNo, sink, label),
      (text, lineNo) => sink.bad(lineNo, `not JSON: ${JSON.stringify(text.slice(0, 80))}; expected OTLP export requests`),
    );
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
