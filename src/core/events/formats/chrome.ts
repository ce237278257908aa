import type { SourceSink } from '../build';
import { forEachJsonValue } from '../lines';
import { isEventRecord, type EventRecord } from '../record';
import { kindCode, type EventStore } from '../store';
import { writeTextFile } from '../write';

/**
 * Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing
 * open. Each node is a process (pid = node code + 1, named by process_name
 * metadata); its events are on one thread and its spans on a second, so spans
 * that overlap logs do not break the slice nesting Perfetto requires. Logs and
 * other point events are thread-scoped instants; spans are complete (X) slices;
 * sends and receives are zero-length X slices joined by a flow (s → f), which
 * Perfetto draws as an arrow. Every trace event carries the full event in `args`,
 * so reading the file back gives the same events.
 */

const SPAN_THREAD_OFFSET = 1_000_000;
const SEND = kindCode('send');
const RECV = kindCode('recv');
const SPAN = kindCode('span');

/** Writes the store as Chrome trace JSON; returns the number of message arrows (flows). */
export async function writeChromeTrace(store: EventStore, out: string): Promise<number> {
  let flows = 0;
  await writeTextFile(out, async (w) => {
    let first = true;
    const put = async (traceEvent: Record<string, unknown>): Promise<void> => {
      await w.write(`${first ? '' : ',\n'}${JSON.stringify(traceEvent)}`);
      first = false;
    };
    await w.write('{"traceEvents":[\n');
    for (let n = 0; n < store.nodes.length; n++) {
      const lane = store.lanes[n];
      if (lane.length === 0) continue;
      const pid = n + 1;
      await put({ ph: 'M', name: 'process_name', pid, tid: pid, args: { name: store.nodes[n] } });
      await put({ ph: 'M', name: 'process_sort_index', pid, tid: pid, args: { sort_index: n } });
      await put({ ph: 'M', name: 'thread_name', pid, tid: pid, args: { name: 'events' } });
      if (lane.some((i) => store.kind[i] === SPAN)) await put({ ph: 'M', name: 'thread_name', pid, tid: pid + SPAN_THREAD_OFFSET, args: { name: 'spans' } });
    }
    for (let i = 0; i < store.size; i++) {
      const { ts, ...args } = store.event(i);
      const pid = store.node[i] + 1;
      const name = args.msg ?? args.span?.name ?? args.kind;
      const kind = store.kind[i];
      if (kind === SPAN) {
        await put({ ph: 'X', name, cat: 'span', ts, dur: store.dur[i], pid, tid: pid + SPAN_THREAD_OFFSET, args });
      } else if (kind === SEND || kind === RECV) {
        await put({ ph: 'X', name, cat: args.kind, ts, dur: 0, pid, tid: pid, args });
        // Perfetto reads string flow ids as hex, so the id is the message's number; the flow binds to the slice just written.
        const id = store.msgId[i] + 1;
        if (kind === SEND && store.receivesOf(i).length > 0) {
          await put({ ph: 's', name: 'message', cat: 'message', id, ts, pid, tid: pid });
          flows++;
        } else if (kind === RECV && store.sendOf(i) >= 0) {
          await put({ ph: 'f', bp: 'e', name: 'message', cat: 'message', id, ts, pid, tid: pid });
        }
      } else {
        await put({ ph: 'i', s: 't', name, cat: args.kind, ts, pid, tid: pid, args });
      }
    }
    await w.write('\n],\n"displayTimeUnit":"ms",\n"otherData":{"generator":"ddbench"}}\n');
  });
  return flows;
}

interface TraceEvent {
  ph?: unknown;
  name?: unknown;
  cat?: unknown;
  ts?: unknown;
  dur?: unknown;
  pid?: unknown;
  tid?: unknown;
  args?: unknown;
}

/**
 * Reads Chrome trace-event JSON: our own export exactly (from `args`), and from
 * other tools the complete slices (X → span events) and instants (→ log events)
 * on lanes named by process_name metadata. Flows are skipped (message arrows come
 * from message ids); other phases are counted in a note.
 */
export async function readChromeTrace(file: string, sink: SourceSink): Promise<void> {
  const processNames = new Map<unknown, string>();
  const skipped = new Map<string, number>();
  await forEachJsonValue(
    file,
    'array-elements',
    (text, lineNo) => {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        sink.bad(lineNo, `not JSON (${(err as Error).message}); expected a trace event object`);
        return;
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        sink.bad(lineNo, 'expected a trace event object like {"ph":"X","name":…,"ts":…,"pid":…}');
        return;
      }
      const e = value as TraceEvent;
      if (e.ph === 'M') {
        const name = (e.args as { name?: unknown } | undefined)?.name;
        if (e.name === 'process_name' && typeof name === 'string') processNames.set(e.pid, name);
        return;
      }
      if (typeof e.ts !== 'number') {
        sink.bad(lineNo, `trace event without a numeric ts (µs): ${text.slice(0, 80)}`);
        return;
      }
      const own = typeof e.args === 'object' && e.args !== null ? { ...(e.args as Record<string, unknown>), ts: e.ts } : undefined;
      if (own !== undefined && isEventRecord(own)) {
        sink.add(own, JSON.stringify(own), lineNo);
        return;
      }
      const record = foreignRecord(e, e.ts, processNames);
      if (record !== undefined) sink.add(record, JSON.stringify(record), lineNo);
      else skipped.set(String(e.ph), (skipped.get(String(e.ph)) ?? 0) + 1);
    },
    () => undefined,
  );
  const counts = [...skipped].filter(([ph]) => !['s', 't', 'f'].includes(ph));
  if (counts.length > 0) sink.note(`skipped trace events of phases the timeline does not show: ${counts.map(([ph, n]) => `${ph} ×${n}`).join(', ')}`);
}

function foreignRecord(e: TraceEvent, ts: number, processNames: Map<unknown, string>): EventRecord | undefined {
  const node = processNames.get(e.pid) ?? `pid ${String(e.pid ?? 0)}`;
  const name = typeof e.name === 'string' ? e.name : '';
  const fields: Record<string, unknown> = { ...(typeof e.args === 'object' && e.args !== null ? (e.args as Record<string, unknown>) : {}) };
  if (typeof e.cat === 'string') fields.cat = e.cat;
  if (e.tid !== undefined && e.tid !== e.pid) fields.tid = e.tid;
  if (e.ph === 'X' && typeof e.dur === 'number') {
    const spanId = `${String(e.pid)}.${String(e.tid)}.${ts}`;
    return { ts, node, kind: 'span', msg: name, span: { traceId: 'chrome', spanId, name, end: ts + e.dur }, fields };
  }
  if (e.ph === 'i' || e.ph === 'I' || e.ph === 'R') return { ts, node, kind: 'log', msg: name, fields };
  return undefined;
}
