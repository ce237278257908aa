/**
 * What the timeline draws over the events, derived once per run: fault periods
 * (from the harness's and the cluster's fault and process events), invariant
 * violations (failed checks) and message arrows (send → receive, or send → the
 * router's drop), with the router's delays and duplicates marked on them.
 */
import { impliedEdges } from '../events/edges';
import { kindCode, type EventStore } from '../events/store';
import { ARROW, type BandKind, type Violation } from './protocol';

export interface Band {
  kind: BandKind;
  nodes: string[];
  t0: number;
  t1: number;
  /** The event that opened the period. */
  start: number;
  label: string;
}

const FAULT = kindCode('fault');
const PROC = kindCode('proc');
const CHECK = kindCode('check');
const SEND = kindCode('send');
const RECV = kindCode('recv');
const SPAN = kindCode('span');

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function linkLabel(f: Record<string, unknown>): string {
  const effects = [
    typeof f.drop === 'number' && `drop ${Math.round(f.drop * 100)}%`,
    typeof f.duplicate === 'number' && `duplicate ${Math.round(f.duplicate * 100)}%`,
    typeof f.reorder === 'number' && `reorder ${Math.round(f.reorder * 100)}%`,
    Array.isArray(f.delayMs) && `delay ${f.delayMs.join('–')} ms`,
  ].filter((e): e is string => typeof e === 'string');
  return `link fault ${String(f.from)}→${String(f.to)}${typeof f.type === 'string' ? ` ${f.type}` : ''}${effects.length > 0 ? `: ${effects.join(', ')}` : ''}`;
}

/**
 * Fault periods: partition … heal, link fault … clear link faults, pause … resume,
 * kill (or a crash) … start/restart. A period still open at the end of the data
 * lasts to its end. Exits the harness caused (kill, stopping the cluster) open no
 * period of their own.
 */
export function faultBands(store: EventStore): Band[] {
  const bands: Band[] = [];
  const end = store.size === 0 ? 0 : store.ts[store.size - 1];
  const nodeLanes = store.nodes.filter((n) => n !== 'harness' && n !== 'router');
  let partition: Band | undefined;
  let links: Band[] = [];
  const paused = new Map<string, Band>();
  const down = new Map<string, Band>();
  const open = (band: Band): Band => (bands.push(band), band);
  for (let i = 0; i < store.size; i++) {
    const kind = store.kind[i];
    if (kind !== FAULT && kind !== PROC) continue;
    const msg = store.text(i);
    const node = store.nodeName(i);
    const ts = store.ts[i];
    if (kind === FAULT && (msg === 'partition' || msg === 'heal')) {
      if (partition !== undefined) partition.t1 = ts;
      partition = undefined;
      if (msg === 'partition') {
        const groups = (store.event(i).fields?.groups as unknown[] | undefined)?.map(strings) ?? [];
        partition = open({ kind: 'partition', nodes: groups.flat(), t0: ts, t1: end, start: i, label: `partition ${groups.map((g) => `{${g.join(', ')}}`).join(' | ')}` });
      }
    } else if (kind === FAULT && msg === 'link fault') {
      const f = store.event(i).fields ?? {};
      const ends = [f.from, f.to].filter((e): e is string => typeof e === 'string' && e !== '*');
      links.push(open({ kind: 'link', nodes: ends.length > 0 ? ends : nodeLanes, t0: ts, t1: end, start: i, label: linkLabel(f) }));
    } else if (kind === FAULT && msg === 'clear link faults') {
      for (const band of links) band.t1 = ts;
      links = [];
    } else if (kind === PROC && msg === 'pause') {
      paused.set(node, open({ kind: 'paused', nodes: [node], t0: ts, t1: end, start: i, label: `${node} paused` }));
    } else if (kind === PROC && msg === 'resume') {
      const band = paused.get(node);
      if (band !== undefined) band.t1 = ts;
      paused.delete(node);
    } else if (kind === PROC && msg === 'kill') {
      if (!down.has(node)) down.set(node, open({ kind: 'down', nodes: [node], t0: ts, t1: end, start: i, label: `${node} killed` }));
    } else if (kind === PROC && msg === 'exit' && store.levelName(i) === 'error' && !down.has(node)) {
      down.set(node, open({ kind: 'crashed', nodes: [node], t0: ts, t1: end, start: i, label: `${node} crashed` }));
    } else if (kind === PROC && (msg === 'start' || msg === 'restart')) {
      const band = down.get(node);
      if (band !== undefined) band.t1 = ts;
      down.delete(node);
    }
  }
  return bands;
}

/** Failed checks: `check` events whose fields say `ok: false`. */
export function violations(store: EventStore): Violation[] {
  const out: Violation[] = [];
  for (let i = 0; i < store.size; i++) {
    if (store.kind[i] !== CHECK) continue;
    if (store.event(i).fields?.ok === false) out.push({ index: i, node: store.nodeName(i), ts: store.ts[i], text: store.text(i) ?? 'check failed' });
  }
  return out;
}

/**
 * Message arrows as columns: the send, where the message ended (a receive, or the
 * router's drop), and flags; then the edges a log implies without message ids
 * (vector clocks, spans calling across services: `impliedEdges`), drawn alike.
 */
export interface Arrows {
  size: number;
  send: Int32Array;
  end: Int32Array;
  /** Node code of the end's lane (the receiver, also for a drop). */
  toNode: Int32Array;
  flags: Uint8Array;
  /** Arrows from `implied` on are implied edges, not messages. */
  implied: number;
}

const ROUTER_FLAG: Record<string, number> = { drop: ARROW.dropped, delay: ARROW.delayed, duplicate: ARROW.duplicated, reorder: ARROW.reordered };

export function messageArrows(store: EventStore): Arrows {
  const sendOfMessage = new Int32Array(store.messageIds.length).fill(-1);
  const routerFlags = new Uint8Array(store.messageIds.length);
  const drops: number[] = [];
  for (let i = 0; i < store.size; i++) {
    const m = store.msgId[i];
    if (m < 0) continue;
    if (store.kind[i] === SEND && sendOfMessage[m] < 0) sendOfMessage[m] = i;
    else if (store.kind[i] === FAULT && store.nodeName(i) === 'router') {
      const flag = ROUTER_FLAG[store.text(i) ?? ''] ?? 0;
      routerFlags[m] |= flag;
      if (flag === ARROW.dropped) drops.push(i);
    }
  }
  const send: number[] = [];
  const end: number[] = [];
  const toNode: number[] = [];
  const flags: number[] = [];
  for (let i = 0; i < store.size; i++) {
    if (store.kind[i] !== RECV) continue;
    const s = store.sendOf(i);
    if (s < 0) continue;
    send.push(s);
    end.push(i);
    toNode.push(store.node[i]);
    // A receive means this copy arrived: the message's drop (of another copy) is not its flag.
    flags.push(routerFlags[store.msgId[i]] & ~ARROW.dropped);
  }
  for (const d of drops) {
    const s = sendOfMessage[store.msgId[d]];
    if (s < 0 || store.peer[d] < 0) continue;
    send.push(s);
    end.push(d);
    toNode.push(store.peer[d]);
    flags.push(routerFlags[store.msgId[d]]);
  }
  const implied = send.length;
  const edges = impliedEdges(store);
  for (let k = 0; k < edges.size; k++) {
    send.push(edges.from[k]);
    end.push(edges.to[k]);
    toNode.push(store.node[edges.to[k]]);
    flags.push(0);
  }
  return { size: send.length, send: Int32Array.from(send), end: Int32Array.from(end), toNode: Int32Array.from(toNode), flags: Uint8Array.from(flags), implied };
}

/** Span events with their nesting depth on their lane (a parent on another node starts a new stack). */
export interface Spans {
  index: Uint32Array;
  depth: Uint8Array;
}

export function spans(store: EventStore): Spans {
  const index: number[] = [];
  const depthOf = new Map<number, number>();
  const spanEvent = new Map<number, number>();
  for (let i = 0; i < store.size; i++) {
    if (store.kind[i] !== SPAN || store.spanId[i] < 0) continue;
    index.push(i);
    if (!spanEvent.has(store.spanId[i])) spanEvent.set(store.spanId[i], i);
  }
  const depth = (i: number, guard: number): number => {
    const known = depthOf.get(i);
    if (known !== undefined) return known;
    const parent = store.parentSpan[i] >= 0 ? spanEvent.get(store.parentSpan[i]) : undefined;
    // The guard stops at cyclic parent ids, which bad traces do have.
    const d = parent === undefined || parent === i || store.node[parent] !== store.node[i] || guard > 64 ? 0 : depth(parent, guard + 1) + 1;
    depthOf.set(i, d);
    return d;
  };
  return { index: Uint32Array.from(index), depth: Uint8Array.from(index, (i) => Math.min(255, depth(i, 0))) };
}
