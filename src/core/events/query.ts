import type { EventKind, Level } from './event';
import { substringPattern, type Pattern } from './pattern';
import { KINDS, kindCode, levelCode, type EventStore } from './store';

export interface EventQuery {
  nodes?: readonly string[];
  kinds?: readonly EventKind[];
  levels?: readonly Level[];
  /** Only events at this level or more severe (events without a level never pass). */
  minLevel?: Level;
  /** Time window in µs, [from, to). */
  from?: number;
  to?: number;
  /**
   * Matched against the message and the JSON text of the fields. A string matches
   * as a case-insensitive substring; a Pattern (a user's regex, linear-time) as given.
   */
  text?: string | Pattern;
  /** Whether `text` also matches the fields (default true); false: the message only. */
  fields?: boolean;
  msgId?: string;
  traceId?: string;
  /** At most this many results (the earliest). */
  limit?: number;
}

type Filter = Omit<EventQuery, 'from' | 'to' | 'limit'>;

/** The indices (ascending, so in time order) of the events matching every given criterion. */
export function queryEvents(store: EventStore, q: EventQuery): Uint32Array {
  const [lo, hi] = store.indexRange(q.from ?? -Infinity, q.to ?? Infinity);
  const matches = compileFilter(store, q);
  const limit = q.limit ?? Infinity;
  const out: number[] = [];
  for (let i = lo; i < hi && out.length < limit; i++) if (matches === undefined || matches(i)) out.push(i);
  return Uint32Array.from(out);
}

/**
 * A predicate over store indices for `q`, or undefined when `q` filters nothing.
 * Typed-array tests come first; text is tested last because it may decode events.
 */
export function compileFilter(store: EventStore, q: Filter): ((i: number) => boolean) | undefined {
  const tests: ((i: number) => boolean)[] = [];
  if (q.nodes !== undefined) {
    const wanted = new Uint8Array(store.nodes.length);
    for (const name of q.nodes) {
      const code = store.nodeCode(name);
      if (code >= 0) wanted[code] = 1;
    }
    tests.push((i) => wanted[store.node[i]] === 1);
  }
  if (q.kinds !== undefined) {
    let mask = 0;
    for (const kind of q.kinds) mask |= 1 << kindCode(kind);
    tests.push((i) => ((mask >>> store.kind[i]) & 1) === 1);
  }
  if (q.levels !== undefined) {
    let mask = 0;
    for (const level of q.levels) mask |= 1 << levelCode(level);
    tests.push((i) => ((mask >>> store.level[i]) & 1) === 1);
  }
  if (q.minLevel !== undefined) {
    const min = levelCode(q.minLevel);
    tests.push((i) => store.level[i] >= min);
  }
  if (q.msgId !== undefined) {
    const code = store.messageIds.indexOf(q.msgId);
    tests.push((i) => store.msgId[i] === code && code >= 0);
  }
  if (q.traceId !== undefined) {
    const code = store.traceIds.indexOf(q.traceId.toLowerCase());
    tests.push((i) => store.trace[i] === code && code >= 0);
  }
  if (q.text !== undefined) tests.push(textMatcher(store, q.text, q.fields ?? true));
  if (tests.length === 0) return undefined;
  return (i) => tests.every((test) => test(i));
}

/**
 * Messages are interned, so each distinct message is tested once. Fields are not in
 * the columns: the event's JSON text is tested first (the fields' JSON is part of
 * it), and only on a hit is the event decoded to test its fields alone.
 */
function textMatcher(store: EventStore, text: string | Pattern, withFields: boolean): (i: number) => boolean {
  const re = typeof text === 'string' ? substringPattern(text) : text;
  // Anchors would match differently inside the whole text than inside the fields' text.
  const prefilter = !/[\^$]/.test(re.source);
  const msgResult = new Int8Array(store.texts.length);
  return (i) => {
    const m = store.msg[i];
    if (m >= 0) {
      if (msgResult[m] === 0) msgResult[m] = re.test(store.texts[m]) ? 1 : -1;
      if (msgResult[m] === 1) return true;
    }
    if (!withFields) return false;
    if (prefilter && !re.test(store.rawText(i))) return false;
    const fields = store.event(i).fields;
    return fields !== undefined && re.test(JSON.stringify(fields));
  };
}

export interface BucketQuery {
  from: number;
  to: number;
  /** Number of buckets, typically the width of the view in pixels. */
  width: number;
  filter?: Filter;
}

/** One node's lane, aggregated: arrays of `width` buckets, ready to transfer to a renderer. */
export interface LaneBuckets {
  node: string;
  nodeCode: number;
  count: Uint32Array;
  /** Most severe level code per bucket (0 none, then debug 1 ... error 4). */
  maxLevel: Uint8Array;
  /** One bit per event kind present (bit = kind code). */
  kinds: Uint8Array;
  /** The most important event per bucket (store index), -1 when the bucket is empty. */
  top: Int32Array;
}

export interface Buckets {
  from: number;
  to: number;
  width: number;
  bucketUs: number;
  /** Events in the window that passed the filter. */
  total: number;
  lanes: LaneBuckets[];
}

/** How much a kind draws the eye when levels tie: faults and checks over messages over logs. */
const KIND_WEIGHT: Record<EventKind, number> = { fault: 7, check: 6, state: 5, proc: 4, send: 3, recv: 3, span: 2, log: 1 };
/** KIND_WEIGHT by kind code. */
const WEIGHT = Uint8Array.from(KINDS, (kind) => KIND_WEIGHT[kind]);

/**
 * Per-pixel aggregation (Perfetto's approach): per lane and time bucket, the count,
 * the worst level, the kinds present and one representative event (most severe,
 * then by kind, then the longest span, then the earliest), so a window of a million
 * events costs `width` entries per lane to draw. One pass over the window's events;
 * spans are bucketed by their start.
 */
export function aggregate(store: EventStore, q: BucketQuery): Buckets {
  const width = Math.max(1, Math.floor(q.width));
  const span = q.to - q.from;
  if (!(span > 0)) throw new RangeError(`aggregate: empty time window [${q.from}, ${q.to})`);
  const bucketUs = span / width;
  const [lo, hi] = store.indexRange(q.from, q.to);
  const matches = q.filter === undefined ? undefined : compileFilter(store, q.filter);
  const lanes: (LaneBuckets | undefined)[] = new Array(store.nodes.length);
  let total = 0;
  for (let i = lo; i < hi; i++) {
    if (matches !== undefined && !matches(i)) continue;
    total++;
    const n = store.node[i];
    const lane = (lanes[n] ??= {
      node: store.nodes[n],
      nodeCode: n,
      count: new Uint32Array(width),
      maxLevel: new Uint8Array(width),
      kinds: new Uint8Array(width),
      top: new Int32Array(width).fill(-1),
    });
    const b = Math.min(width - 1, Math.floor((store.ts[i] - q.from) / bucketUs));
    lane.count[b]++;
    if (store.level[i] > lane.maxLevel[b]) lane.maxLevel[b] = store.level[i];
    lane.kinds[b] |= 1 << store.kind[i];
    const top = lane.top[b];
    if (top < 0 || outranks(store, i, top)) lane.top[b] = i;
  }
  return { from: q.from, to: q.to, width, bucketUs, total, lanes: lanes.filter((l): l is LaneBuckets => l !== undefined) };
}

function outranks(store: EventStore, a: number, b: number): boolean {
  if (store.level[a] !== store.level[b]) return store.level[a] > store.level[b];
  if (WEIGHT[store.kind[a]] !== WEIGHT[store.kind[b]]) return WEIGHT[store.kind[a]] > WEIGHT[store.kind[b]];
  return store.dur[a] > store.dur[b];
}
