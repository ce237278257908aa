import { z } from 'zod';
import type { SourceSink } from '../build';
import type { EventRecord } from '../record';
import { addRecords, forEachDocument, SkippedSpans } from './span-json';

/**
 * Zipkin's v2 JSON: a list of spans (what the collector takes and a trace download
 * holds) or a list of traces (api/v2/traces). Times are epoch microseconds; the
 * local endpoint's service is the lane. A client and a server that share a span id
 * (B3's shared spans, `"shared": true` on the server half) become two spans, the
 * server's a child of the client's, so the call shows as an arrow between services.
 * An endpoint without a service name is named by its address.
 */

const Endpoint = z.object({ serviceName: z.string().optional(), ipv4: z.string().optional(), ipv6: z.string().optional(), port: z.number().optional() });
const Span = z.object({
  traceId: z.string(),
  id: z.string(),
  parentId: z.string().nullish(),
  name: z.string().nullish(),
  kind: z.enum(['CLIENT', 'SERVER', 'PRODUCER', 'CONSUMER']).nullish(),
  timestamp: z.number().nullish(),
  duration: z.number().nullish(),
  shared: z.boolean().nullish(),
  localEndpoint: Endpoint.nullish(),
  remoteEndpoint: Endpoint.nullish(),
  annotations: z.array(z.object({ timestamp: z.number(), value: z.string() })).nullish(),
  tags: z.record(z.string(), z.string()).nullish(),
});
type Span = z.infer<typeof Span>;

/** Whether a JSON value looks like Zipkin v2 JSON (for format detection). */
export function isZipkinDocument(value: unknown): boolean {
  const first = Array.isArray(value) ? (Array.isArray(value[0]) ? (value[0] as unknown[])[0] : value[0]) : undefined;
  return typeof first === 'object' && first !== null && 'traceId' in first && 'id' in first && !('ph' in first);
}

/** The id a span has on the timeline: a shared span's client half is renamed, so its server half keeps the id its children name. */
function timelineIds(spans: readonly Span[]): Map<Span, { spanId: string; parentId?: string }> {
  const key = (s: Span): string => `${s.traceId}/${s.id}`;
  const clientHalves = new Set(spans.filter((s) => s.shared !== true).map(key));
  const sharedIds = new Set(spans.filter((s) => s.shared === true && clientHalves.has(key(s))).map(key));
  const ids = new Map<Span, { spanId: string; parentId?: string }>();
  for (const s of spans) {
    const parentId = s.parentId ?? undefined;
    const isShared = sharedIds.has(key(s));
    if (isShared && s.shared !== true) ids.set(s, { spanId: `${s.id}.client`, ...(parentId !== undefined && { parentId }) });
    else if (isShared) ids.set(s, { spanId: s.id, parentId: `${s.id}.client` });
    else ids.set(s, { spanId: s.id, ...(parentId !== undefined && { parentId }) });
  }
  return ids;
}

function spanRecords(span: Span, ids: { spanId: string; parentId?: string }, sink: SourceSink): EventRecord[] {
  const local = span.localEndpoint;
  const node = local?.serviceName ?? local?.ipv4 ?? local?.ipv6 ?? 'unknown';
  const name = span.name ?? '';
  const fields: Record<string, unknown> = { ...(span.tags ?? {}) };
  if (span.kind) fields['span.kind'] = span.kind;
  if (span.remoteEndpoint?.serviceName) fields['remote.service'] = span.remoteEndpoint.serviceName;
  const records: EventRecord[] = [];
  if (span.timestamp !== undefined && span.timestamp !== null) {
    records.push({
      ts: sink.fromEpoch(span.timestamp),
      node,
      kind: 'span',
      msg: name,
      ...(span.tags?.error !== undefined && { level: 'error' as const }),
      span: {
        traceId: span.traceId,
        spanId: ids.spanId,
        name,
        ...(ids.parentId !== undefined && { parentId: ids.parentId }),
        ...(span.duration !== undefined && span.duration !== null && { end: sink.fromEpoch(span.timestamp + span.duration) }),
      },
      ...(Object.keys(fields).length > 0 && { fields }),
    });
  }
  for (const a of span.annotations ?? []) {
    records.push({ ts: sink.fromEpoch(a.timestamp), node, kind: 'log', msg: a.value, fields: { traceId: span.traceId, spanId: ids.spanId } });
  }
  return records;
}

export async function readZipkinJson(file: string, sink: SourceSink): Promise<void> {
  await forEachDocument(file, 'Zipkin v2 JSON (a list of spans, or of traces)', sink, (value, lineNo) => {
    if (!Array.isArray(value)) {
      sink.bad(lineNo, 'expected Zipkin v2 JSON: a list of spans like [{"traceId", "id", "name", "timestamp", "localEndpoint"}], or a list of such lists');
      return;
    }
    const skipped = new SkippedSpans();
    const spans: Span[] = [];
    let untimed = 0;
    for (const item of value.flatMap((v: unknown) => (Array.isArray(v) ? v : [v]))) {
      const parsed = Span.safeParse(item);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        skipped.add(`${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'not a span'}`);
        continue;
      }
      if (parsed.data.timestamp === undefined || parsed.data.timestamp === null) untimed++;
      spans.push(parsed.data);
    }
    skipped.report(sink, lineNo, 'Zipkin');
    if (untimed > 0) sink.note(`${untimed} span(s) without a timestamp (Zipkin allows them for late halves) show only their annotations`);
    const ids = timelineIds(spans);
    addRecords(
      sink,
      spans.flatMap((s) => spanRecords(s, ids.get(s) ?? { spanId: s.id }, sink)),
      lineNo,
    );
  });
}
