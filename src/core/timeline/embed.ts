/**
 * An event store as two binary blobs, for the self-contained HTML export. The first
 * holds a JSON header (string tables, sources, where each column is, the JSON text
 * of the few events the model reads while it is built: faults and checks) and the
 * typed columns in compact form (see ColumnLayout); the second every event's JSON
 * text as UTF-8, which only details and text search need. The page rebuilds the very
 * same EventStore from the first (no parsing per event) and draws, and takes the
 * second in later. Browser-safe: no Node import (compression is the caller's).
 */
import { TextArena } from '../events/arena';
import { EventStore, kindCode, type StoreColumns } from '../events/store';

const MAGIC = 'ddbench-store';
const VERSION = 3;

type Typed = Float64Array | Uint32Array | Int32Array | Uint16Array | Int16Array | Uint8Array | Int8Array;
const CONSTRUCTORS = { f64: Float64Array, u32: Uint32Array, i32: Int32Array, u16: Uint16Array, i16: Int16Array, u8: Uint8Array, i8: Int8Array } as const;
type ColumnType = keyof typeof CONSTRUCTORS;
/** Integer types by width, for storing a column in the narrowest that holds it. */
const NARROW: readonly { type: ColumnType; min: number; max: number }[] = [
  { type: 'u8', min: 0, max: 0xff },
  { type: 'i8', min: -0x80, max: 0x7f },
  { type: 'u16', min: 0, max: 0xffff },
  { type: 'i16', min: -0x8000, max: 0x7fff },
  { type: 'u32', min: 0, max: 0xffffffff },
  { type: 'i32', min: -0x80000000, max: 0x7fffffff },
];

/**
 * How one column is stored: `const` (every value the same, no bytes), `delta` (an
 * integer column as the differences of neighbours, when they need fewer bytes), or `plain`; integers in
 * the narrowest type that holds what is stored, floats byte-transposed (all first bytes,
 * then all second bytes, ...), which gzip compresses far better. Fewer bytes in the
 * page are less for the browser to parse, decode and inflate before the first frame.
 */
interface ColumnLayout {
  name: string;
  /** The store's type of the column. */
  type: ColumnType;
  length: number;
  enc: 'const' | 'delta' | 'plain';
  /** The type it is stored as (its delta's, for `delta`). */
  stored: ColumnType;
  offset: number;
  /** The value of a `const` column. */
  value?: number;
}

interface Header {
  magic: string;
  v: number;
  columns: ColumnLayout[];
  strings: Pick<StoreColumns, 'nodes' | 'texts' | 'messageIds' | 'traceIds' | 'spanIds' | 'sources' | 'bad' | 'badCount'> & { epochOriginUs: number | null };
  /** [start in the text blob, JSON text] of the events the model reads while it is built. */
  early: [number, string][];
}

/** Kinds whose full event building the timeline model reads (fault periods, failed checks). */
const EARLY_KINDS = new Set([kindCode('fault'), kindCode('check')]);

function typeOf(column: Typed): ColumnType {
  for (const [name, ctor] of Object.entries(CONSTRUCTORS)) if (column instanceof ctor) return name as ColumnType;
  throw new Error('not a typed column');
}

/** The store's columns through its public API (the store keeps its own private). */
function columnsOf(store: EventStore): { columns: Record<string, Typed>; text: Uint8Array } {
  const n = store.size;
  // Sources are matched by file; a file read twice in one load would map to its first reading.
  const sourceIndex = new Map(store.sources.map((s, k) => [s.file, k] as const));
  const source = new Uint16Array(n);
  const line = new Uint32Array(n);
  const rawStart = new Uint32Array(n);
  const rawEnd = new Uint32Array(n);
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const origin = store.origin(i);
    source[i] = sourceIndex.get(origin.file) ?? 0;
    line[i] = origin.line;
    const raw = encoder.encode(store.rawText(i));
    parts.push(raw);
    rawStart[i] = bytes;
    bytes += raw.length;
    rawEnd[i] = bytes;
  }
  const text = new Uint8Array(bytes);
  let at = 0;
  for (const p of parts) {
    text.set(p, at);
    at += p.length;
  }
  const { ts, dur, node, kind, level, flags, msg, msgId, peer, trace, spanId, parentSpan, vcOff, vcLen, vcKey, vcVal } = store;
  const columns = { ts, dur, node, kind, level, flags, msg, msgId, peer, trace, spanId, parentSpan, source, line, vcOff, vcLen, vcKey, vcVal, rawStart, rawEnd };
  return { columns, text };
}

const align8 = (n: number): number => (n + 7) & ~7;

function narrowest(min: number, max: number): ColumnType {
  const fit = NARROW.find((t) => min >= t.min && max <= t.max);
  if (fit === undefined) throw new Error(`no integer type holds ${min}..${max}`);
  return fit.type;
}

/** The column as stored: its layout (offset still to place) and its bytes. */
function encodeColumn(name: string, column: Typed): { layout: Omit<ColumnLayout, 'offset'>; bytes: Uint8Array } {
  const type = typeOf(column);
  const base = { name, type, length: column.length };
  // Only values JSON keeps as they are (not NaN, infinities or -0) go in the header.
  const first = column.length > 0 ? column[0] : NaN;
  if (Number.isFinite(first) && !Object.is(first, -0) && column.every((x) => Object.is(x, first))) return { layout: { ...base, enc: 'const', stored: type, value: first }, bytes: new Uint8Array(0) };
  if (column.length === 0) return { layout: { ...base, enc: 'plain', stored: type }, bytes: new Uint8Array(0) };
  if (type === 'f64') {
    const raw = new Uint8Array(column.buffer, column.byteOffset, column.byteLength);
    const n = column.length;
    const out = new Uint8Array(raw.length);
    for (let i = 0; i < n; i++) for (let b = 0; b < 8; b++) out[b * n + i] = raw[i * 8 + b];
    return { layout: { ...base, enc: 'plain', stored: type }, bytes: out };
  }
  let min = Infinity;
  let max = -Infinity;
  // The first value is stored as it is, the rest as differences.
  let dmin = column[0];
  let dmax = column[0];
  for (let i = 0; i < column.length; i++) {
    min = Math.min(min, column[i]);
    max = Math.max(max, column[i]);
    if (i > 0) {
      const d = column[i] - column[i - 1];
      dmin = Math.min(dmin, d);
      dmax = Math.max(dmax, d);
    }
  }
  const deltaType = narrowest(dmin, dmax);
  const plainType = narrowest(min, max);
  const delta = CONSTRUCTORS[deltaType].BYTES_PER_ELEMENT < CONSTRUCTORS[plainType].BYTES_PER_ELEMENT;
  const stored = delta ? deltaType : plainType;
  const out = new CONSTRUCTORS[stored](column.length);
  for (let i = 0; i < column.length; i++) out[i] = delta && i > 0 ? column[i] - column[i - 1] : column[i];
  return { layout: { ...base, enc: delta ? 'delta' : 'plain', stored }, bytes: new Uint8Array(out.buffer, out.byteOffset, out.byteLength) };
}

/** The store's column back from its stored form. */
function decodeColumn(c: ColumnLayout, body: ArrayBuffer): Typed {
  const out = new CONSTRUCTORS[c.type](c.length);
  if (c.enc === 'const') return out.fill(c.value ?? 0);
  if (c.type === 'f64') {
    const raw = new Uint8Array(body, c.offset, c.length * 8);
    const bytes = new Uint8Array(out.buffer);
    const n = c.length;
    for (let b = 0; b < 8; b++) for (let i = 0, at = b * n; i < n; i++) bytes[i * 8 + b] = raw[at + i];
    return out;
  }
  const stored = new CONSTRUCTORS[c.stored](body, c.offset, c.length);
  if (c.enc === 'plain') {
    out.set(stored);
    return out;
  }
  let sum = 0;
  for (let i = 0; i < c.length; i++) out[i] = sum += stored[i];
  return out;
}

export interface PackedStore {
  columns: Uint8Array;
  text: Uint8Array;
}

export function packStore(store: EventStore): PackedStore {
  const { columns, text } = columnsOf(store);
  const layout: ColumnLayout[] = [];
  const parts: Uint8Array[] = [];
  let offset = 0;
  for (const [name, column] of Object.entries(columns)) {
    const encoded = encodeColumn(name, column);
    layout.push({ ...encoded.layout, offset });
    parts.push(encoded.bytes);
    offset = align8(offset + encoded.bytes.length);
  }
  const early: Header['early'] = [];
  for (let i = 0; i < store.size; i++) if (EARLY_KINDS.has(store.kind[i])) early.push([columns.rawStart[i], store.rawText(i)]);
  const header: Header = {
    magic: MAGIC,
    v: VERSION,
    columns: layout,
    strings: {
      nodes: [...store.nodes],
      texts: [...store.texts],
      messageIds: [...store.messageIds],
      traceIds: [...store.traceIds],
      spanIds: [...store.spanIds],
      sources: store.sources.map((s) => ({ ...s, notes: [...s.notes] })),
      bad: [...store.bad],
      badCount: store.badCount,
      epochOriginUs: store.epochOriginUs ?? null,
    },
    early,
  };
  const head = new TextEncoder().encode(JSON.stringify(header));
  const bodyStart = align8(4 + head.length);
  const out = new Uint8Array(bodyStart + offset);
  new DataView(out.buffer).setUint32(0, head.length, true);
  out.set(head, 4);
  layout.forEach((c, k) => out.set(parts[k], bodyStart + c.offset));
  return { columns: out, text };
}

/** The page's arena: the early events' texts until every event's text (one UTF-8 buffer) is loaded. */
class BlobArena extends TextArena {
  private readonly decoder = new TextDecoder();
  private bytes: Uint8Array | undefined;

  constructor(private readonly early: Map<number, string>) {
    super();
  }

  load(bytes: Uint8Array): void {
    this.bytes = bytes;
    this.early.clear();
  }

  override text(_buffer: number, start: number, end: number): string {
    if (this.bytes !== undefined) return this.decoder.decode(this.bytes.subarray(start, end));
    const text = this.early.get(start);
    if (text === undefined) throw new Error('the events are still loading');
    return text;
  }
}

export interface UnpackedStore {
  store: EventStore;
  /** Gives the store every event's text (the second blob); until then only faults and checks decode in full. */
  loadText(text: Uint8Array): void;
}

export function unpackStore(blob: Uint8Array): UnpackedStore {
  const headLength = new DataView(blob.buffer, blob.byteOffset, blob.byteLength).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(blob.subarray(4, 4 + headLength))) as Header;
  if (header.magic !== MAGIC || header.v !== VERSION) throw new Error(`the embedded data is not a version ${VERSION} event store`);
  const bodyStart = align8(4 + headLength);
  // Copied out so every typed view is aligned, whatever the blob's own offset.
  const body = blob.slice(bodyStart).buffer;
  const col = <T extends ColumnType>(name: string, type: T): InstanceType<(typeof CONSTRUCTORS)[T]> => {
    const c = header.columns.find((x) => x.name === name);
    if (c === undefined || c.type !== type) throw new Error(`the embedded data has no ${type} column ${name}`);
    return decodeColumn(c, body) as InstanceType<(typeof CONSTRUCTORS)[T]>;
  };
  const ts = col('ts', 'f64');
  const { epochOriginUs, ...strings } = header.strings;
  const arena = new BlobArena(new Map(header.early));
  const store = new EventStore({
    ts,
    dur: col('dur', 'f64'),
    node: col('node', 'u32'),
    kind: col('kind', 'u8'),
    level: col('level', 'u8'),
    flags: col('flags', 'u8'),
    msg: col('msg', 'i32'),
    msgId: col('msgId', 'i32'),
    peer: col('peer', 'i32'),
    trace: col('trace', 'i32'),
    spanId: col('spanId', 'i32'),
    parentSpan: col('parentSpan', 'i32'),
    source: col('source', 'u16'),
    line: col('line', 'u32'),
    vcOff: col('vcOff', 'u32'),
    vcLen: col('vcLen', 'u16'),
    vcKey: col('vcKey', 'u32'),
    vcVal: col('vcVal', 'u32'),
    rawBuffer: new Uint32Array(ts.length),
    rawStart: col('rawStart', 'u32'),
    rawEnd: col('rawEnd', 'u32'),
    arena,
    ...strings,
    epochOriginUs: epochOriginUs ?? undefined,
  });
  return { store, loadText: (text) => arena.load(text) };
}
