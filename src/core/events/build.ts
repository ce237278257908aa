import * as path from 'node:path';
import { TextArena, type PartSource } from './arena';
import { ByteInterner, Interner, permute, sortOrder } from './columns';
import type { EventRecord } from './record';
import type { EventLineScanner } from './scan';
import { EventStore, FLAG_CLOCK, kindCode, levelCode, type BadRecord, type InputFormat, type SourceReport } from './store';

/** Clock entries per event assumed when sizing up front (a handful of nodes). */
const TYPICAL_CLOCK_ENTRIES = 4;
/** Bad records kept with their reasons; beyond this they are only counted. */
const MAX_BAD_KEPT = 1000;

/** What a format reader writes its events and problems to. */
export interface SourceSink {
  /** The source's short name (used in made-up event ids). */
  readonly label: string;
  /** Adds one event with `json`, its JSON text (what the store decodes it from later). */
  add(record: EventRecord, json: string, line: number, flags?: number): void;
  /** The arena's number for `source`'s part `part`, which the byte ranges given to addLine and addScanned are relative to. */
  textPart(source: PartSource, part: number): number;
  /** Adds one event whose JSON text is bytes [start, end) of a text part (`textPart`), read from its source on demand. */
  addLine(record: EventRecord, part: number, start: number, end: number, line: number): void;
  /** As addLine, for a line the scanner read from bytes[start, end) (its values are still in `scanned`). */
  addScanned(scanned: EventLineScanner, bytes: Buffer, part: number, start: number, end: number, line: number): void;
  bad(line: number, error: string): void;
  note(text: string): void;
  /** The executions a multi-execution log holds. */
  executions(labels: string[]): void;
  /**
   * For router records: true (and counted as a duplicate) when an event file read
   * earlier already holds this step of the message, so it is not shown twice.
   */
  seenInEvents(kind: 'send' | 'recv' | 'fault', msgId: string): boolean;
  /** Expected number of events still to come, so the columns grow once. */
  expect(count: number): void;
  /**
   * Converts an absolute time (µs since the Unix epoch, from OTLP or a log's dates)
   * to the timeline's µs: relative to the load's epoch origin, which is the first
   * absolute time met unless the caller fixed it.
   */
  fromEpoch(epochUs: number): number;
}

const SEND = kindCode('send');
const RECV = kindCode('recv');
const FAULT = kindCode('fault');
const SPAN = kindCode('span');

/** Typed arrays that grow: one typed field per column keeps every store monomorphic (fast) in V8. */
function grown<T extends Float64Array | Uint32Array | Int32Array | Uint16Array | Uint8Array>(column: T, capacity: number): T {
  const next = new (column.constructor as new (n: number) => T)(capacity);
  next.set(column as never);
  return next;
}

/** Collects events from any number of sources, then sorts them into an EventStore. */
export class EventStoreBuilder {
  private size = 0;
  private capacity = 1024;
  private ts = new Float64Array(this.capacity);
  private dur = new Float64Array(this.capacity);
  private node = new Uint32Array(this.capacity);
  private kind = new Uint8Array(this.capacity);
  private level = new Uint8Array(this.capacity);
  private flags = new Uint8Array(this.capacity);
  private msg = new Int32Array(this.capacity);
  private msgId = new Int32Array(this.capacity);
  private peer = new Int32Array(this.capacity);
  private trace = new Int32Array(this.capacity);
  private spanId = new Int32Array(this.capacity);
  private parentSpan = new Int32Array(this.capacity);
  private sourceIndex = new Uint16Array(this.capacity);
  private line = new Uint32Array(this.capacity);
  private vcOff = new Uint32Array(this.capacity);
  private vcLen = new Uint16Array(this.capacity);
  private vcSize = 0;
  private vcKey = new Uint32Array(this.capacity * 4);
  private vcVal = new Uint32Array(this.capacity * 4);
  private rawBuffer = new Uint32Array(this.capacity);
  private rawStart = new Uint32Array(this.capacity);
  private rawEnd = new Uint32Array(this.capacity);
  private readonly arena = new TextArena();
  private readonly nodes = new Interner();
  private readonly texts = new Interner();
  private readonly messageIds = new Interner();
  private readonly traceIds = new Interner();
  private readonly spanIds = new Interner();
  private readonly nodeBytes = new ByteInterner(this.nodes);
  private readonly textBytes = new ByteInterner(this.texts);
  private readonly messageIdBytes = new ByteInterner(this.messageIds);
  private readonly sources: SourceReport[] = [];
  private readonly bad: BadRecord[] = [];
  private badCount = 0;
  /** Per message code and step, how many events the event files hold; built when a router file comes. */
  private tallies: { send: Uint16Array; recv: Uint16Array; fault: Uint16Array } | undefined;

  constructor(private epochOriginUs?: number) {}

  /** Starts a source; everything its reader adds is attributed to `file`. */
  source(file: string, format: InputFormat): SourceSink {
    const index = this.sources.length;
    if (index > 0xffff) throw new Error('too many input files (at most 65536)');
    const report: SourceReport = { file, label: this.labelFor(file), format, events: 0, duplicates: 0, bad: 0, notes: [] };
    this.sources.push(report);
    return {
      label: report.label,
      add: (record, json, line, flags = 0) => {
        const at = this.arena.write(json);
        this.add(record, at.buffer, at.start, at.end, index, line, flags);
        report.events++;
      },
      textPart: (source, part) => this.arena.lazy(source, part),
      addLine: (record, part, start, end, line) => {
        this.add(record, part, start, end, index, line, 0);
        report.events++;
      },
      addScanned: (scanned, bytes, part, start, end, line) => {
        this.addScanned(scanned, bytes, part, start, end, index, line);
        report.events++;
      },
      bad: (line, error) => {
        report.bad++;
        this.badCount++;
        if (this.bad.length < MAX_BAD_KEPT) this.bad.push({ file, line, error });
      },
      note: (text) => {
        report.notes.push(text);
      },
      executions: (labels) => {
        report.executions = labels;
      },
      seenInEvents: (kind, msgId) => {
        const seen = this.takeTally(kind, msgId);
        if (seen) report.duplicates++;
        return seen;
      },
      expect: (count) => {
        this.reserve(this.size + count);
        this.reserveClocks(this.vcSize + count * TYPICAL_CLOCK_ENTRIES);
      },
      fromEpoch: (epochUs) => {
        this.epochOriginUs ??= epochUs;
        return epochUs - this.epochOriginUs;
      },
    };
  }


  /** Sorts everything into time order (ties keep arrival order) and hands it to a store. */
  build(): EventStore {
    const n = this.size;
    const ts = this.ts.subarray(0, n);
    const order = sortOrder(ts);
    // Already in order (the usual case), the columns are views of the builder's: their pages past `n`
    // were never written, so they take no memory, and a copy would cost as much as building them.
    const sorted = <T extends Float64Array | Uint32Array | Int32Array | Uint16Array | Uint8Array>(column: T): T =>
      order === undefined ? (column.subarray(0, n) as T) : permute(column, order);
    return new EventStore({
      ts: order === undefined ? ts : permute(ts, order),
      dur: sorted(this.dur),
      node: sorted(this.node),
      kind: sorted(this.kind),
      level: sorted(this.level),
      flags: sorted(this.flags),
      msg: sorted(this.msg),
      msgId: sorted(this.msgId),
      peer: sorted(this.peer),
      trace: sorted(this.trace),
      spanId: sorted(this.spanId),
      parentSpan: sorted(this.parentSpan),
      source: sorted(this.sourceIndex),
      line: sorted(this.line),
      vcOff: sorted(this.vcOff),
      vcLen: sorted(this.vcLen),
      vcKey: this.vcKey.subarray(0, this.vcSize),
      vcVal: this.vcVal.subarray(0, this.vcSize),
      rawBuffer: sorted(this.rawBuffer),
      rawStart: sorted(this.rawStart),
      rawEnd: sorted(this.rawEnd),
      arena: this.arena,
      nodes: this.nodes.values,
      texts: this.texts.values,
      messageIds: this.messageIds.values,
      traceIds: this.traceIds.values,
      spanIds: this.spanIds.values,
      sources: this.sources,
      bad: this.bad,
      badCount: this.badCount,
      epochOriginUs: this.epochOriginUs,
    });
  }

  private add(r: EventRecord, rawBuffer: number, rawStart: number, rawEnd: number, source: number, line: number, extraFlags: number): void {
    if (this.size === this.capacity) this.reserve(this.capacity * 2);
    const i = this.size++;
    this.ts[i] = r.ts;
    this.node[i] = this.nodes.code(r.node);
    this.kind[i] = kindCode(r.kind);
    this.level[i] = levelCode(r.level);
    this.msg[i] = r.msg === undefined ? -1 : this.texts.code(r.msg);
    this.msgId[i] = r.msgId === undefined ? -1 : this.messageIds.code(r.msgId);
    this.peer[i] = r.peer === undefined ? -1 : this.nodes.code(r.peer);
    const span = r.span;
    const traceId = span?.traceId ?? r.fields?.traceId;
    // Hex ids are case-insensitive (OTLP), so the index keeps them in lower case.
    this.trace[i] = typeof traceId === 'string' && traceId !== '' ? this.traceIds.code(traceId.toLowerCase()) : -1;
    this.spanId[i] = span === undefined ? -1 : this.spanIds.code(span.spanId);
    this.parentSpan[i] = span?.parentId === undefined ? -1 : this.spanIds.code(span.parentId);
    this.dur[i] = r.kind === 'span' && span?.end !== undefined ? Math.max(0, span.end - r.ts) : 0;
    this.sourceIndex[i] = source;
    this.line[i] = line;
    this.rawBuffer[i] = rawBuffer;
    this.rawStart[i] = rawStart;
    this.rawEnd[i] = rawEnd;
    this.vcOff[i] = this.vcSize;
    let entries = 0;
    const vc = r.vc;
    if (vc !== undefined) {
      for (const key in vc) {
        if (this.vcSize === this.vcKey.length) this.reserveClocks(this.vcSize * 2);
        this.vcKey[this.vcSize] = this.nodes.code(key);
        this.vcVal[this.vcSize++] = vc[key];
        entries++;
      }
    }
    this.vcLen[i] = entries;
    this.flags[i] = extraFlags | (vc !== undefined ? FLAG_CLOCK : 0);
  }

  /** What add() does for a record, from a scanned line's bytes: the same columns, no string for a value seen before. */
  private addScanned(r: EventLineScanner, bytes: Buffer, rawBuffer: number, rawStart: number, rawEnd: number, source: number, line: number): void {
    if (this.size === this.capacity) this.reserve(this.capacity * 2);
    const i = this.size++;
    this.ts[i] = r.ts;
    this.node[i] = this.nodeBytes.code(bytes, r.node.start, r.node.end, r.node.ascii);
    this.kind[i] = r.kind;
    this.level[i] = r.level;
    this.msg[i] = r.msg.start < 0 ? -1 : this.textBytes.code(bytes, r.msg.start, r.msg.end, r.msg.ascii);
    this.msgId[i] = r.msgId.start < 0 ? -1 : this.messageIdBytes.code(bytes, r.msgId.start, r.msgId.end, r.msgId.ascii);
    this.peer[i] = r.peer.start < 0 ? -1 : this.nodeBytes.code(bytes, r.peer.start, r.peer.end, r.peer.ascii);
    const span = r.span;
    const traceId = span?.traceId ?? r.fieldsTraceId;
    this.trace[i] = traceId !== undefined && traceId !== '' ? this.traceIds.code(traceId.toLowerCase()) : -1;
    this.spanId[i] = span === undefined ? -1 : this.spanIds.code(span.spanId);
    this.parentSpan[i] = span?.parentId === undefined ? -1 : this.spanIds.code(span.parentId);
    this.dur[i] = r.kind === SPAN && span?.end !== undefined ? Math.max(0, span.end - r.ts) : 0;
    this.sourceIndex[i] = source;
    this.line[i] = line;
    this.rawBuffer[i] = rawBuffer;
    this.rawStart[i] = rawStart;
    this.rawEnd[i] = rawEnd;
    this.vcOff[i] = this.vcSize;
    const entries = r.clockSize;
    if (this.vcSize + entries > this.vcKey.length) this.reserveClocks(Math.max(this.vcSize * 2, this.vcSize + entries));
    for (let k = 0; k < entries; k++) {
      this.vcKey[this.vcSize] = this.nodeBytes.code(bytes, r.clockKeyStart[k], r.clockKeyEnd[k], r.clockKeyAscii[k] === 1);
      this.vcVal[this.vcSize++] = r.clockValue[k];
    }
    this.vcLen[i] = entries;
    this.flags[i] = r.hasClock ? FLAG_CLOCK : 0;
  }

  /** Makes room for `capacity` clock entries. */
  private reserveClocks(capacity: number): void {
    if (capacity <= this.vcKey.length) return;
    this.vcKey = grown(this.vcKey, capacity);
    this.vcVal = grown(this.vcVal, capacity);
  }

  /** Makes room for `capacity` events. */
  private reserve(capacity: number): void {
    if (capacity <= this.capacity) return;
    this.capacity = capacity;
    this.ts = grown(this.ts, capacity);
    this.dur = grown(this.dur, capacity);
    this.node = grown(this.node, capacity);
    this.kind = grown(this.kind, capacity);
    this.level = grown(this.level, capacity);
    this.flags = grown(this.flags, capacity);
    this.msg = grown(this.msg, capacity);
    this.msgId = grown(this.msgId, capacity);
    this.peer = grown(this.peer, capacity);
    this.trace = grown(this.trace, capacity);
    this.spanId = grown(this.spanId, capacity);
    this.parentSpan = grown(this.parentSpan, capacity);
    this.sourceIndex = grown(this.sourceIndex, capacity);
    this.line = grown(this.line, capacity);
    this.vcOff = grown(this.vcOff, capacity);
    this.vcLen = grown(this.vcLen, capacity);
    this.rawBuffer = grown(this.rawBuffer, capacity);
    this.rawStart = grown(this.rawStart, capacity);
    this.rawEnd = grown(this.rawEnd, capacity);
  }

  private takeTally(kind: 'send' | 'recv' | 'fault', msgId: string): boolean {
    this.tallies ??= this.countMessageSteps();
    const code = this.messageIds.find(msgId);
    const counts = this.tallies[kind];
    if (code < 0 || code >= counts.length || counts[code] === 0) return false;
    counts[code]--;
    return true;
  }

  /** How many sends, receives and faults the events read so far hold per message. */
  private countMessageSteps(): { send: Uint16Array; recv: Uint16Array; fault: Uint16Array } {
    const size = this.messageIds.size;
    const tallies = { send: new Uint16Array(size), recv: new Uint16Array(size), fault: new Uint16Array(size) };
    for (let i = 0; i < this.size; i++) {
      const m = this.msgId[i];
      if (m < 0) continue;
      const k = this.kind[i];
      const counts = k === SEND ? tallies.send : k === RECV ? tallies.recv : k === FAULT ? tallies.fault : undefined;
      if (counts !== undefined && counts[m] < 0xffff) counts[m]++;
    }
    return tallies;
  }

  private labelFor(file: string): string {
    const base = path.basename(file);
    const taken = new Set(this.sources.map((s) => s.label));
    if (!taken.has(base)) return base;
    let k = 2;
    while (taken.has(`${base}#${k}`)) k++;
    return `${base}#${k}`;
  }
}
