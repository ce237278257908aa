import { dependencies, ownCounter, VIA } from './causality';
import { FLAG_CLOCK, type EventStore } from './store';

/**
 * Communication edges a log implies without message ids, to draw as arrows: from
 * logged vector clocks the way ShiViz draws them (an event whose clock entry for
 * another node grew received from that node's event with that counter; an entry it
 * learned through another of its senders draws no edge of its own), and from a span
 * to its child span on another node (a call between services). Send → receive by
 * message id is not here: those arrows are the messages themselves.
 */
export interface ImpliedEdges {
  size: number;
  from: Int32Array;
  to: Int32Array;
  /** `VIA.clock` or `VIA.span`. */
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
  return { size: from.length, from: Int32Array.from(from), to: Int32Array.from(to), via: Uint8Array.from(via) };
}
