import { EventKind, Level, type Event, type VectorClock } from './event';
import type { TextArena } from './arena';
import { lowerBound } from './columns';
import { toEvent, type EventRecord } from './record';

/** The file formats the timeline reads. */
export const InputFormat = ['events', 'router', 'text', 'shiviz', 'otlp', 'chrome', 'jaeger', 'zipkin'] as const;
export type InputFormat = (typeof InputFormat)[number];

/** Kind codes index this list. */
export const KINDS: readonly EventKind[] = EventKind.options;
/** Level codes: 0 is "no level", then 1 + the index in this list (so a larger code is more severe). */
export const LEVELS: readonly Level[] = Level.options;

const KIND_CODES = new Map(KINDS.map((kind, code) => [kind, code]));
const LEVEL_CODES = new Map(LEVELS.map((level, code) => [level, code + 1]));

export function kindCode(kind: EventKind): number {
  return KIND_CODES.get(kind) ?? -1;
}

export function levelCode(level: Level | undefined): number {
  return level === undefined ? 0 : (LEVEL_CODES.get(level) ?? 0);
}

/** The event carried its own vector clock. */
export const FLAG_CLOCK = 1;
/** The source had no time for the event; `ts` is its position in the file. */
export const FLAG_SYNTHETIC_TIME = 2;

export interface SourceReport {
  file: string;
  /** Short unique name of the file, used in event ids the store makes up. */
  label: string;
  format: InputFormat;
  events: number;
  /** Router records left out because the event files already hold the same step. */
  duplicates: number;
  bad: number;
  notes: string[];
  /** A multi-execution log's executions in order (their labels, `#n` when a delimiter has none); which one was read is `LoadOptions.execution`. */
  executions?: string[];
}

/** A line (or record) that could not be read, and why. */
export interface BadRecord {
  file: string;
  line: number;
  error: string;
}

/** Where an event came from. */
export interface Origin {
  file: string;
  line: number;
}

/** What the builder hands over; every column is in time order. */
export interface StoreColumns {
  ts: Float64Array;
  /** Duration of spans (µs), 0 for other events. */
  dur: Float64Array;
  node: Uint32Array;
  kind: Uint8Array;
  level: Uint8Array;
  flags: Uint8Array;
  /** Codes into `texts`, -1 for none. */
  msg: Int32Array;
  /** Codes into `messageIds`, -1 for none. */
  msgId: Int32Array;
  /** Codes into `nodes`, -1 for none. */
  peer: Int32Array;
  /** Codes into `traceIds`, -1 for none. */
  trace: Int32Array;
  /** Codes into `spanIds` of span events' own id and parent id, -1 for none. */
  spanId: Int32Array;
  parentSpan: Int32Array;
  source: Uint16Array;
  line: Uint32Array;
  /** Each event's original vector clock: `vcLen` entries from `vcOff` in the `vcKey`/`vcVal` pool. */
  vcOff: Uint32Array;
  vcLen: Uint16Array;
  vcKey: Uint32Array;
  vcVal: Uint32Array;
  /** Where each event's JSON text is in `arena`; the full event is decoded from it on demand. */
  rawBuffer: Uint32Array;
  rawStart: Uint32Array;
  rawEnd: Uint32Array;
  arena: TextArena;
  nodes: string[];
  texts: string[];
  messageIds: string[];
  traceIds: string[];
  spanIds: string[];
  sources: SourceReport[];
  bad: BadRecord[];
  badCount: number;
  /** The Unix time (µs) that timeline time 0 stands for, when a source had absolute times. */
  epochOriginUs: number | undefined;
}

/**
 * A run's events as columns in time order (ties keep file order), with the event
 * index (0..size-1) as the handle everything else uses. Per event it keeps typed
 * columns, interned strings and where the event's JSON text is (read back from its
 * file, for an events file), so a million events fit in a few hundred MB and the full
 * event is decoded only when someone looks at it.
 */
export class EventStore {
  readonly size: number;
  readonly ts: Float64Array;
  readonly dur: Float64Array;
  readonly node: Uint32Array;
  readonly kind: Uint8Array;
  readonly level: Uint8Array;
  readonly flags: Uint8Array;
  readonly msg: Int32Array;
  readonly msgId: Int32Array;
  readonly peer: Int32Array;
  readonly trace: Int32Array;
  readonly spanId: Int32Array;
  readonly parentSpan: Int32Array;
  /** Each event's own vector clock: `vcLen[i]` entries from `vcOff[i]` in the (node code, counter) pool `vcKey`/`vcVal`. */
  readonly vcOff: Uint32Array;
  readonly vcLen: Uint16Array;
  readonly vcKey: Uint32Array;
  readonly vcVal: Uint32Array;
  readonly nodes: readonly string[];
  readonly texts: readonly string[];
  readonly messageIds: readonly string[];
  readonly traceIds: readonly string[];
  readonly spanIds: readonly string[];
  readonly sources: readonly SourceReport[];
  /** The first bad records (at most a thousand are kept); `badCount` counts them all. */
  readonly bad: readonly BadRecord[];
  readonly badCount: number;
  /** The Unix time (µs) that timeline time 0 stands for, when a source had absolute times. */
  readonly epochOriginUs: number | undefined;
  /** Per node code, its events' indices in time order (program order). */
  readonly lanes: readonly Uint32Array[];
  /** Each event's position in its lane. */
  readonly lanePos: Uint32Array;
  private readonly c: StoreColumns;
  /** Per message code: index of its (first) send, -1 if none was recorded. */
  private readonly sendOfMessage: Int32Array;
  /** Per message code: first receive; `nextRecv` chains the others in time order. */
  private readonly firstRecv: Int32Array;
  private readonly nextRecv: Int32Array;

  constructor(columns: StoreColumns) {
    this.c = columns;
    this.size = columns.ts.length;
    ({ ts: this.ts, dur: this.dur, node: this.node, kind: this.kind, level: this.level, flags: this.flags } = columns);
    ({ msg: this.msg, msgId: this.msgId, peer: this.peer, trace: this.trace, spanId: this.spanId, parentSpan: this.parentSpan } = columns);
    ({ nodes: this.nodes, texts: this.texts, messageIds: this.messageIds, traceIds: this.traceIds, spanIds: this.spanIds } = columns);
    ({ vcOff: this.vcOff, vcLen: this.vcLen, vcKey: this.vcKey, vcVal: this.vcVal } = columns);
    ({ sources: this.sources, bad: this.bad, badCount: this.badCount, epochOriginUs: this.epochOriginUs } = columns);
    [this.lanes, this.lanePos] = buildLanes(columns.node, columns.nodes.length);
    [this.sendOfMessage, this.firstRecv, this.nextRecv] = linkMessages(this, columns.messageIds.length);
  }

  /** The full event at `i`, decoded from its JSON text. */
  event(i: number): Event {
    const record = JSON.parse(this.rawText(i)) as EventRecord;
    return toEvent(record, this.defaultId(i));
  }

  /** The event's JSON text as kept (for searching). */
  rawText(i: number): string {
    return this.c.arena.text(this.c.rawBuffer[i], this.c.rawStart[i], this.c.rawEnd[i]);
  }

  origin(i: number): Origin {
    return { file: this.sources[this.c.source[i]].file, line: this.c.line[i] };
  }

  /** "file:line", for messages. */
  where(i: number): string {
    return `${this.sources[this.c.source[i]].label}:${this.c.line[i]}`;
  }

  nodeName(i: number): string {
    return this.nodes[this.node[i]];
  }

  kindName(i: number): EventKind {
    return KINDS[this.kind[i]];
  }

  levelName(i: number): Level | undefined {
    return this.level[i] === 0 ? undefined : LEVELS[this.level[i] - 1];
  }

  text(i: number): string | undefined {
    return this.msg[i] < 0 ? undefined : this.texts[this.msg[i]];
  }

  /** A short description for error messages: `n1 send "append" (events.jsonl:12)`. */
  describe(i: number): string {
    const text = this.text(i);
    return `${this.nodeName(i)} ${this.kindName(i)}${text === undefined ? '' : ` ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)}`} (${this.where(i)})`;
  }

  /** The event's own vector clock, undefined if it carried none. */
  clock(i: number): VectorClock | undefined {
    if ((this.flags[i] & FLAG_CLOCK) === 0) return undefined;
    const vc: VectorClock = {};
    for (let k = this.vcOff[i], end = k + this.vcLen[i]; k < end; k++) vc[this.nodes[this.vcKey[k]]] = this.vcVal[k];
    return vc;
  }

  nodeCode(name: string): number {
    return this.nodes.indexOf(name);
  }

  /** For a receive: the index of its send, or -1 when the send was not recorded (or `i` is no receive). */
  sendOf(i: number): number {
    return this.kind[i] === RECV && this.msgId[i] >= 0 ? this.sendOfMessage[this.msgId[i]] : -1;
  }

  /** For a send: its receives in time order (several if the message was duplicated, none if lost). */
  receivesOf(i: number): number[] {
    const out: number[] = [];
    if (this.kind[i] !== SEND || this.msgId[i] < 0) return out;
    for (let r = this.firstRecv[this.msgId[i]]; r >= 0; r = this.nextRecv[r]) out.push(r);
    return out;
  }

  /** The other end(s) of a send or a receive. */
  partners(i: number): number[] {
    if (this.kind[i] === SEND) return this.receivesOf(i);
    const send = this.sendOf(i);
    return send < 0 ? [] : [send];
  }

  /** Indices [lo, hi) of the events with from <= ts < to. */
  indexRange(from: number, to: number): [number, number] {
    return [lowerBound(this.ts, from), lowerBound(this.ts, to)];
  }

  /** The index of the event with this id, or -1. Scans the texts: meant for a lookup now and then. */
  findById(id: string): number {
    const needle = JSON.stringify(id);
    for (let i = 0; i < this.size; i++) {
      const raw = this.rawText(i);
      if ((raw.includes(needle) || !raw.includes('"id"')) && this.event(i).id === id) return i;
    }
    return -1;
  }

  private defaultId(i: number): string {
    return `${this.sources[this.c.source[i]].label}:${this.c.line[i]}`;
  }
}

const SEND = kindCode('send');
const RECV = kindCode('recv');

/** Groups event indices by node with a counting sort, so each lane is in time order. */
function buildLanes(node: Uint32Array, nodeCount: number): [Uint32Array[], Uint32Array] {
  const counts = new Uint32Array(nodeCount);
  for (let i = 0; i < node.length; i++) counts[node[i]]++;
  const all = new Uint32Array(node.length);
  const lanes: Uint32Array[] = [];
  let offset = 0;
  for (let n = 0; n < nodeCount; n++) {
    lanes.push(all.subarray(offset, offset + counts[n]));
    offset += counts[n];
  }
  const fill = new Uint32Array(nodeCount);
  const lanePos = new Uint32Array(node.length);
  for (let i = 0; i < node.length; i++) {
    const n = node[i];
    lanePos[i] = fill[n];
    lanes[n][fill[n]++] = i;
  }
  return [lanes, lanePos];
}

function linkMessages(store: EventStore, messageCount: number): [Int32Array, Int32Array, Int32Array] {
  const sendOf = new Int32Array(messageCount).fill(-1);
  const firstRecv = new Int32Array(messageCount).fill(-1);
  const nextRecv = new Int32Array(store.size).fill(-1);
  // Walking backwards and prepending leaves each receive chain in time order.
  for (let i = store.size - 1; i >= 0; i--) {
    const m = store.msgId[i];
    if (m < 0) continue;
    if (store.kind[i] === SEND) sendOf[m] = i;
    else if (store.kind[i] === RECV) {
      nextRecv[i] = firstRecv[m];
      firstRecv[m] = i;
    }
  }
  return [sendOf, firstRecv, nextRecv];
}
