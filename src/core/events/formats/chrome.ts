import type { SourceSink } from '../build';
import { forEachJsonValue } from '../lines';
import { isEventRecord, type EventRecord } from '../record';
import { kindCode, type EventStore } from '../store';
import { writeTextFile } from '../write';

/**
 * Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing
 * open. Each node is a process (pid = node code + 1, named by process_name
 * metadata); its events are on one thread and its spans on a second, so spans
 * that overlap logs do not break the slice nesting Perfetto requires. The trace
 * starts at the earliest event (an event before the first one read keeps its own,
 * negative, time in `args.ts`). Logs and
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
    // Time zero is the first event read, which need not be the earliest; Chrome's viewers want no negative ts, so the trace starts at the earliest and each event keeps its own ts in args.
    const shift = store.size > 0 && store.ts[0] < 0 ? -store.ts[0] : 0;
    for (let i = 0; i < store.size; i++) {
      const { ts: own, ...rest } = store.event(i);
      const ts = own + shift;
      const args = shift === 0 ? rest : { ...rest, ts: own };
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
  id?: unknown;
  args?: unknown;
}

/** A trace event of another tool, kept until the whole file (with its metadata, often at the end) is read. */
interface Foreign {
  e: TraceEvent;
  ts: number;
  lineNo: number;
}

/**
 * Reads Chrome trace-event JSON: our own export exactly (from `args`), and from
 * other tools (catapult, chrome://tracing, Perfetto's JSON) complete slices (X) and
 * begin/end pairs (B/E) as spans, async begin/end (b/e, S/F) as spans, instants and
 * async steps as logs, counters (C) as logs with their values, and flows (s → t → f)
 * as messages, so they draw as arrows. Each thread is a lane (`process/thread`) when
 * a process has several, named by process_name and thread_name metadata.
 */
export async function readChromeTrace(file: string, sink: SourceSink): Promise<void> {
  const processNames = new Map<unknown, string>();
  const threadNames = new Map<string, string>();
  const foreign: Foreign[] = [];
  let own = 0;
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
        if (e.name === 'thread_name' && typeof name === 'string') threadNames.set(threadKey(e), name);
        return;
      }
      if (typeof e.ts !== 'number') {
        sink.bad(lineNo, `trace event without a numeric ts (µs): ${text.slice(0, 80)}`);
        return;
      }
      const record = typeof e.args === 'object' && e.args !== null ? { ts: e.ts, ...(e.args as Record<string, unknown>) } : undefined;
      if (record !== undefined && isEventRecord(record)) {
        own++;
        sink.add(record, JSON.stringify(record), lineNo);
        return;
      }
      foreign.push({ e, ts: e.ts, lineNo });
    },
    () => undefined,
  );
  // Our own export's flows repeat messages its events already carry (by message id).
  const kept = own > 0 ? foreign.filter(({ e }) => !['s', 't', 'f'].includes(String(e.ph))) : foreign;
  if (kept.length > 0) addForeign(kept, laneNamer(kept, processNames, threadNames), sink);
}

function threadKey(e: TraceEvent): string {
  return `${String(e.pid)}:${String(e.tid ?? e.pid)}`;
}

/** Lane names: the process, or `process/thread` for a process whose events are on several threads. */
function laneNamer(foreign: readonly Foreign[], processNames: Map<unknown, string>, threadNames: Map<string, string>): (e: TraceEvent) => string {
  const threads = new Map<unknown, Set<unknown>>();
  for (const { e } of foreign) {
    const set = threads.get(e.pid) ?? new Set();
    set.add(e.tid ?? e.pid);
    threads.set(e.pid, set);
  }
  return (e) => {
    const process = processNames.get(e.pid) ?? `pid ${String(e.pid ?? 0)}`;
    if ((threads.get(e.pid)?.size ?? 0) <= 1) return process;
    return `${process}/${threadNames.get(threadKey(e)) ?? `tid ${String(e.tid ?? e.pid)}`}`;
  };
}

function argsOf(e: TraceEvent): Record<string, unknown> {
  return typeof e.args === 'object' && e.args !== null ? { ...(e.args as Record<string, unknown>) } : {};
}

function nameOf(e: TraceEvent): string {
  return typeof e.name === 'string' ? e.name : '';
}

/** Turns other tools' trace events into records: spans from X, B/E and async pairs; logs; messages from flows. */
function addForeign(foreign: readonly Foreign[], laneOf: (e: TraceEvent) => string, sink: SourceSink): void {
  const out: { record: EventRecord; lineNo: number }[] = [];
  const skipped = new Map<string, number>();
  const stacks = new Map<string, { f: Foreign; index: number }[]>();
  const asyncOpen = new Map<string, { f: Foreign; index: number }[]>();
  const flows = new Map<string, Foreign[]>();
  let unmatchedEnds = 0;
  const fields = (e: TraceEvent): Record<string, unknown> => ({ ...argsOf(e), ...(typeof e.cat === 'string' && { cat: e.cat }), ...(e.tid !== undefined && e.tid !== e.pid && { tid: e.tid }) });
  const span = (f: Foreign, end: number | undefined, extra: Record<string, unknown> = {}): EventRecord => {
    const name = nameOf(f.e);
    const spanId = `${String(f.e.pid)}.${String(f.e.tid)}.${f.ts}`;
    const all = { ...fields(f.e), ...extra };
    return { ts: f.ts, node: laneOf(f.e), kind: 'span', msg: name, span: { traceId: 'chrome', spanId, name, ...(end !== undefined && { end }) }, ...(Object.keys(all).length > 0 && { fields: all }) };
  };
  const log = (f: Foreign, msg: string, extra: Record<string, unknown> = {}): EventRecord => {
    const all = { ...fields(f.e), ...extra };
    return { ts: f.ts, node: laneOf(f.e), kind: 'log', msg, ...(Object.keys(all).length > 0 && { fields: all }) };
  };
  for (const f of foreign) {
    const { e } = f;
    const ph = String(e.ph);
    const asyncKey = `${String(e.cat)}|${String(e.id)}|${nameOf(e)}`;
    if (ph === 'X') out.push({ record: typeof e.dur === 'number' ? span(f, f.ts + e.dur) : log(f, nameOf(e)), lineNo: f.lineNo });
    else if (ph === 'B' || ph === 'b' || ph === 'S') {
      const open = ph === 'B' ? stacks : asyncOpen;
      const key = ph === 'B' ? threadKey(e) : asyncKey;
      const list = open.get(key) ?? [];
      list.push({ f, index: out.length });
      open.set(key, list);
      out.push({ record: span(f, undefined), lineNo: f.lineNo });
    } else if (ph === 'E' || ph === 'e' || ph === 'F') {
      const list = (ph === 'E' ? stacks : asyncOpen).get(ph === 'E' ? threadKey(e) : asyncKey);
      const begin = list?.pop();
      if (begin === undefined) unmatchedEnds++;
      else out[begin.index].record = span(begin.f, f.ts, argsOf(e));
    } else if (ph === 'i' || ph === 'I' || ph === 'R' || ph === 'n' || ph === 'T' || ph === 'p') out.push({ record: log(f, nameOf(e)), lineNo: f.lineNo });
    else if (ph === 'C') {
      const values = Object.entries(argsOf(e)).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
      out.push({ record: log(f, `${nameOf(e)} ${values.join(' ')}`.trim(), { counter: true }), lineNo: f.lineNo });
    } else if (ph === 's' || ph === 't' || ph === 'f') {
      const key = `${String(e.cat)}|${String(e.id)}`;
      const chain = flows.get(key) ?? [];
      chain.push(f);
      flows.set(key, chain);
    } else skipped.set(ph, (skipped.get(ph) ?? 0) + 1);
  }
  for (const [key, chain] of flows) {
    chain.sort((a, b) => a.ts - b.ts);
    chain.forEach((f, k) => {
      const ph = String(f.e.ph);
      const base = { ts: f.ts, node: laneOf(f.e), msg: nameOf(f.e) || 'flow' };
      if (ph !== 's' && k > 0) out.push({ record: { ...base, kind: 'recv', msgId: `flow ${key} #${k - 1}`, fields: fields(f.e) }, lineNo: f.lineNo });
      if (ph !== 'f' && k < chain.length - 1) out.push({ record: { ...base, kind: 'send', msgId: `flow ${key} #${k}`, fields: fields(f.e) }, lineNo: f.lineNo });
    });
  }
  const open = [...stacks.values(), ...asyncOpen.values()].reduce((n, list) => n + list.length, 0);
  for (const { record, lineNo } of out) sink.add(record, JSON.stringify(record), lineNo);
  if (open > 0) sink.note(`${open} slice(s) begun (B, b, S) without an end; shown from their start`);
  if (unmatchedEnds > 0) sink.note(`${unmatchedEnds} end event(s) (E, e, F) without a begin were skipped`);
  if (skipped.size > 0) sink.note(`skipped trace events of phases the timeline does not show: ${[...skipped].map(([ph, n]) => `${ph} ×${n}`).join(', ')}`);
}
