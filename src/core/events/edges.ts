import { dependencies, ownCounter, VIA } from './causality';
import { FLAG_CLOCK, kindCode, type EventStore } from './store';

const SPAN = kindCode('span');
/** A span link (OTLP): the linked span led to this one (a batch's producer, a retried request) without being its parent. */
export const VIA_LINK = 3;

/**
 * Communication edges a log implies without message ids, to draw as arrows: from
 * logged vector clocks the way ShiViz draws them (an event whose clock entry for
 * another node grew received from that node's event with that counter; an entry it
 * learned through another of its senders draws no edge of its own), from a span to
 * its child span on another node (a call between services), and from a linked span
 * to the span that links it (OTLP span links). Send → receive by
 * message id is not here: those arrows are the messages themselves.
 */
export interface ImpliedEdges {
  size: number;
  from: Int32Array;
  to: Int32Array;
  /** `VIA.clock`, `VIA.span` or `VIA_LINK`. */
  via: Uint8Array;
}

/** Whether the logged clock of `later` covers `earlier` (so `earlier` reached it through `later`). */
function covers(store: EventStore, later: number, earlier: number): boolean {
  if ((store.flags[later] & FLAG_CLOCK) === 0) return false;
  const n = store.node[earlier];
  const count = ownCounter(store, earlier);
  for (let k = store.vcOff[later], end = k + store.vcLen[later]; k < end; k++) if (store.vcKey[k] === n) return store.vcVal[k] >= count;
  return false;
}

export function impliedEdges(store: EventStore): ImpliedEdges {
  const deps = dependencies(store);
  const from: number[] = [];
  const to: number[] = [];
  const via: number[] = [];
  for (let e = 0; e < store.size; e++) {
    const first = deps.start[e];
    const last = deps.start[e + 1];
    for (let k = first; k < last; k++) {
      const d = deps.list[k];
      if (deps.via[k] === VIA.message) continue;
      if (deps.via[k] === VIA.clock) {
        let transitive = false;
        for (let j = first; j < last && !transitive; j++) transitive = j !== k && covers(store, deps.list[j], d);
        if (transitive) continue;
      }
      from.push(d);
      to.push(e);
      via.push(deps.via[k]);
    }
  }
  for (const [linked, linking] of linkEdges(store)) {
    from.push(linked);
    to.push(linking);
    via.push(VIA_LINK);
  }
  return { size: from.length, from: Int32Array.from(from), to: Int32Array.from(to), via: Uint8Array.from(via) };
}

/** OTLP span links, which the spans keep as their `links` field: (linked span, linking span) pairs of spans in the store. */
function linkEdges(store: EventStore): [number, number][] {
  if (!store.sources.some((s) => s.format === 'otlp')) return [];
  const spanOf = new Map<string, number>();
  const linking: number[] = [];
  for (let i = 0; i < store.size; i++) {
    if (store.kind[i] !== SPAN || store.spanId[i] < 0) continue;
    if (!spanOf.has(store.spanIds[store.spanId[i]])) spanOf.set(store.spanIds[store.spanId[i]], i);
    linking.push(i);
  }
  const edges: [number, number][] = [];
  for (const i of linking) {
    const links = store.event(i).fields?.links;
    if (!Array.isArray(links)) continue;
    for (const link of links as unknown[]) {
      const id = typeof link === 'object' && link !== null && 'spanId' in link && typeof link.spanId === 'string' ? link.spanId : undefined;
      const target = id === undefined ? undefined : spanOf.get(id);
      if (target !== undefined && target !== i) edges.push([target, i]);
    }
  }
  return edges;
}
