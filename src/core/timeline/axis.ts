import { lowerBound, sortOrder } from '../events/columns';
import { causality } from '../events/causality';
import { FLAG_CLOCK, kindCode, type EventStore } from '../events/store';
import type { Axis as AxisName } from './protocol';

/**
 * One horizontal axis over a run: each event's position, and the events sorted by
 * it, so a window is a binary search and a contiguous scan.
 */
export interface Axis {
  readonly name: AxisName;
  /** Position of each event, by store index. */
  readonly x: Float64Array;
  /** Store indices in axis order; undefined when that is store order (the time axis). */
  readonly order: Uint32Array | undefined;
  /** `x` in axis order, for binary searches. */
  readonly sorted: Float64Array;
  readonly extent: [number, number];
  /** The axis position of a wall-clock time (for span ends and fault periods). */
  at(ts: number): number;
}

export function timeAxis(store: EventStore): Axis {
  const { ts } = store;
  return { name: 'time', x: ts, order: undefined, sorted: ts, extent: timeExtent(store), at: (t) => t };
}

/**
 * From the first event to the last moment anything is seen: a span drawn from its
 * start may end after every later event starts, and the first view, Fit and zoom-out
 * must show it whole.
 */
function timeExtent(store: EventStore): [number, number] {
  const { ts, dur } = store;
  if (ts.length === 0) return [0, 1];
  let end = ts[ts.length - 1];
  for (let i = 0; i < ts.length; i++) if (ts[i] + dur[i] > end) end = ts[i] + dur[i];
  return [ts[0], end];
}

const SEND = kindCode('send');
const RECV = kindCode('recv');

/**
 * Lamport order: x is the event's Lamport time from the happens-before of the data
 * layer, so every message arrow points forward and concurrent events share columns.
 * Lanes with no causal edge at all (the harness, the router) would all pile up at
 * the left; their events are placed at the largest Lamport time reached by the
 * other lanes at their wall-clock time instead, which keeps their program order
 * and contradicts no edge (they have none).
 */
export function causalAxis(store: EventStore): Axis {
  const lamport = causality(store).lamport;
  const anchored = anchoredNodes(store);
  const n = store.size;
  /** Running maximum, in time order, of the anchored events' Lamport times. */
  const reached = new Float64Array(n);
  let max = 0;
  for (let i = 0; i < n; i++) {
    if (anchored[store.node[i]] === 1 && lamport[i] > max) max = lamport[i];
    reached[i] = max;
  }
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) x[i] = anchored[store.node[i]] === 1 ? lamport[i] : reached[i];
  const order = sortOrder(x);
  const sorted = order === undefined ? x : Float64Array.from(order, (i) => x[i]);
  const at = (t: number): number => {
    const k = upperBound(store.ts, t) - 1;
    return k < 0 ? 0 : reached[k];
  };
  return { name: 'causal', x, order, sorted, extent: extentOf(sorted), at };
}

/** Nodes that take part in a message with a recorded partner, or log vector clocks. */
function anchoredNodes(store: EventStore): Uint8Array {
  const anchored = new Uint8Array(store.nodes.length);
  for (let i = 0; i < store.size; i++) {
    const n = store.node[i];
    if (anchored[n] === 1) continue;
    if ((store.flags[i] & FLAG_CLOCK) !== 0) anchored[n] = 1;
    else if (store.kind[i] === RECV && store.sendOf(i) >= 0) {
      anchored[n] = 1;
      anchored[store.node[store.sendOf(i)]] = 1;
    } else if (store.kind[i] === SEND && store.receivesOf(i).length > 0) anchored[n] = 1;
  }
  return anchored;
}

function extentOf(sorted: Float64Array): [number, number] {
  return sorted.length === 0 ? [0, 1] : [sorted[0], sorted[sorted.length - 1]];
}

/** The positions [lo, hi) in axis order of the events with from <= x <= to. */
export function axisRange(axis: Axis, from: number, to: number): [number, number] {
  return [lowerBound(axis.sorted, from), upperBound(axis.sorted, to)];
}

/** The first index whose value is > x in the sorted `values`. */
export function upperBound(values: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
