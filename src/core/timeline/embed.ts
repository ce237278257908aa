/**
 * An event store as two binary blobs, for the self-contained HTML export. The first
 * holds a JSON header (string tables, sources, where each column is, the JSON text
 * of the few events the model reads while it is built: faults and checks) and the
 * typed columns as they are; the second every event's JSON text as UTF-8, most of
 * the bytes, which only details and text search need. The page rebuilds the very
 * same EventStore from the first (no parsing per event) and draws, and takes the
 * second in later. Browser-safe: no Node import (compression is the caller's).
 */
import { TextArena } from '../events/arena';
import { EventStore, kindCode, type StoreColumns } from '../events/store';

const MAGIC = 'ddbench-store';
const VERSION = 2;

type Typed = Float64Array | Uint32Array | Int32Array | Uint16Array | Uint8Array;
const CONSTRUCTORS = { f64: Float64Array, u32: Uint32Array, i32: Int32Array, u16: Uint16Array, u8: Uint8Array } as const;
type ColumnType = keyof typeof CONSTRUCTORS;

interface Header {
  magic: string;
  v: number;
  columns: { name: string; type: ColumnType; offset: number; length: number }[];
  strings: Pick<StoreColumns, 'nodes' | 'texts' | 'messageIds' | 'traceIds' | 'spanIds' | 'sources' | 'bad' | 'badCount'> & { epochOriginUs: number | null };
  /** [start in the text blob, JSON text] of the events the model reads while it is built. */
  early: [number, string][];
}

/** Kinds whose full event building the timeline model reads (fault periods, failed checks). */
const EARLY_KINDS = new Set([kindCode('fault'), kindCode('check')]);

function typeOf(column: Typed): ColumnType {
  if (column instanceof Float64Array) return 'f64';
  if (column instanceof Uint32Array) return 'u32';
  if (column instanceof Int32Array) return 'i32';
  if (column instanceof Uint16Array) return 'u16';
  return 'u8';
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

export interface PackedStore {
  columns: Uint8Array;
  text: Uint8Array;
}

export function packStore(store: EventStore): PackedStore {
  const { columns, text } = columnsOf(store);
  const layout: Header['columns'] = [];
  let offset = 0;
  for (const [name, column] of Object.entries(columns)) {
    layout.push({ name, type: typeOf(column), offset, length: column.length });
    offset = align8(offset + column.byteLength);
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
  for (const c of layout) {
    const column = columns[c.name];
    out.set(new Uint8Array(column.buffer, column.byteOffset, column.byteLength), bodyStart + c.offset);
  }
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
  const body = blob.slice(bodyStart);
  const col = <T extends ColumnType>(name: string, type: T): InstanceType<(typeof CONSTRUCTORS)[T]> => {
    const c = header.columns.find((x) => x.name === name);
    if (c === undefined || c.type !== type) throw new Error(`the embedded data has no ${type} column ${name}`);
    return new CONSTRUCTORS[type](body.buffer, c.offset, c.length) as InstanceType<(typeof CONSTRUCTORS)[T]>;
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
