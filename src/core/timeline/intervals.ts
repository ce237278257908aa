import { sortOrder } from '../events/columns';

/**
 * Intervals [x0, x1] sorted by x0, with the running maximum of x1, so the ones that
 * overlap a window are found with one binary search and a scan that stops at the
 * window's end (message arrows and spans, which are mostly short).
 */
export interface Intervals {
  /** Item ids (whatever the caller numbered them) in x0 order. */
  readonly order: Uint32Array;
  readonly x0: Float64Array;
  readonly x1: Float64Array;
  readonly reach: Float64Array;
}

export function intervals(x0: Float64Array, x1: Float64Array): Intervals {
  const n = x0.length;
  const order = sortOrder(x0) ?? Uint32Array.from({ length: n }, (_, i) => i);
  const sx0 = Float64Array.from(order, (i) => x0[i]);
  const sx1 = Float64Array.from(order, (i) => x1[i]);
  const reach = new Float64Array(n);
  let max = -Infinity;
  for (let k = 0; k < n; k++) reach[k] = max = Math.max(max, sx1[k]);
  return { order, x0: sx0, x1: sx1, reach };
}

/** Positions [lo, hi) to scan for intervals overlapping [from, to]; each still needs x1 >= from. */
export function overlapping(iv: Intervals, from: number, to: number): [number, number] {
  let lo = 0;
  let hi = iv.reach.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (iv.reach[mid] < from) lo = mid + 1;
    else hi = mid;
  }
  const start = lo;
  hi = iv.x0.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (iv.x0[mid] <= to) lo = mid + 1;
    else hi = mid;
  }
  return [start, lo];
}
