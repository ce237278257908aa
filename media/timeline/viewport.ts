/**
 * The visible range on the axis and the arithmetic of zooming and panning it.
 * Pure functions over [from, to] in axis units, so they are tested in Node.
 */
import type { Axis } from '../../src/core/timeline/protocol';

export type Range = readonly [number, number];

/** The narrowest view: 10 µs of wall time, or 4 steps of Lamport time. */
export function minSpan(axis: Axis): number {
  return axis === 'time' ? 10 : 4;
}

/** The whole extent with a small margin, so the first and last events are not on the edge. */
export function fitRange(extent: Range): Range {
  const pad = Math.max((extent[1] - extent[0]) * 0.02, 1);
  return [extent[0] - pad, extent[1] + pad];
}

/** Keeps a view within the padded extent and no narrower than the minimum. */
export function clampRange(r: Range, extent: Range, axis: Axis): Range {
  const [lo, hi] = fitRange(extent);
  let span = Math.max(r[1] - r[0], minSpan(axis));
  if (span > hi - lo) span = hi - lo;
  let from = r[0];
  if (from < lo) from = lo;
  if (from + span > hi) from = hi - span;
  return [from, from + span];
}

/** Zooms by `factor` (< 1 zooms in) keeping the point at `anchor` (0..1 across the view) still. */
export function zoomAt(r: Range, factor: number, anchor: number, extent: Range, axis: Axis): Range {
  const span = r[1] - r[0];
  const at = r[0] + span * anchor;
  const next = span * factor;
  return clampRange([at - next * anchor, at - next * anchor + next], extent, axis);
}

/** Pans by a fraction of the view's width (negative = towards the start). */
export function panBy(r: Range, fraction: number, extent: Range, axis: Axis): Range {
  const d = (r[1] - r[0]) * fraction;
  return clampRange([r[0] + d, r[1] + d], extent, axis);
}

/** A view around the given points, with a margin of 10% on each side. */
export function fitPoints(xs: readonly number[], extent: Range, axis: Axis): Range {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  const span = Math.max(hi - lo, minSpan(axis) * 20);
  const mid = (lo + hi) / 2;
  return clampRange([mid - span * 0.6, mid + span * 0.6], extent, axis);
}

/** Moves the view the least so that x is inside it (with a margin), keeping its width. */
export function reveal(r: Range, x: number, extent: Range, axis: Axis): Range {
  const span = r[1] - r[0];
  const margin = span * 0.1;
  if (x >= r[0] + margin && x <= r[1] - margin) return r;
  return clampRange([x - span / 2, x + span / 2], extent, axis);
}

/** Tick positions for the axis: a 1-2-5 step giving about one tick per `pxPerTick` pixels. */
export function ticks(r: Range, widthPx: number, pxPerTick = 90): { step: number; values: number[] } {
  const raw = ((r[1] - r[0]) / Math.max(1, widthPx)) * pxPerTick;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const values: number[] = [];
  for (let v = Math.ceil(r[0] / step) * step; v <= r[1]; v += step) values.push(v);
  return { step, values };
}

/** A time in µs as text with as many decimals as the tick step needs: "12.35 s", "340 ms", "15 µs". */
export function formatTime(us: number, step = 0): string {
  const abs = Math.abs(step || us);
  if (abs >= 1e6 || Math.abs(us) >= 1e6) return `${(us / 1e6).toFixed(decimals(step / 1e6))} s`;
  if (abs >= 1e3 || Math.abs(us) >= 1e3) return `${(us / 1e3).toFixed(decimals(step / 1e3))} ms`;
  return `${us.toFixed(decimals(step))} µs`;
}

function decimals(step: number): number {
  if (!(step > 0) || step >= 1) return 0;
  return Math.min(6, Math.ceil(-Math.log10(step)));
}

export function formatX(axis: Axis, x: number, step = 0): string {
  return axis === 'time' ? formatTime(x, step) : `L${Math.round(x)}`;
}
