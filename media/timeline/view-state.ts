/**
 * What part of the run is on screen: the axis, the visible range on it (remembered
 * per axis in the persisted UI state, so switching back returns to where one was),
 * the run's extent, and the lanes' vertical scroll. Pure arithmetic over viewport.ts,
 * so it is tested in Node; `changed` tells the app a new range needs its window.
 */
import type { Axis, UiState } from '../../src/core/timeline/protocol';
import { clampRange, fitPoints, fitRange, panBy, reveal, zoomAt, type Range } from './viewport';

/** Where the view goes when the extent arrives: its saved range, the newest events, where it was, or everything. */
export type Placement = 'restore' | 'follow' | 'keep' | 'fit';

/** One key press zooms by this factor, or pans by this fraction of the view. */
export const ZOOM_STEP = 0.7;
export const PAN_STEP = 0.25;
/** Wheel delta to zoom factor: exp(deltaY × this). */
const WHEEL_ZOOM = 0.0015;

export interface Wheel {
  deltaX: number;
  deltaY: number;
  shiftKey: boolean;
}

export class ViewState {
  range: Range = [0, 1];
  extent: Range = [0, 1];
  scrollY = 0;

  constructor(
    private readonly ui: Pick<UiState, 'axis' | 'view'>,
    private readonly changed: () => void,
  ) {}

  get axis(): Axis {
    return this.ui.axis;
  }

  /** Shows `r` (kept within the extent) and remembers it for this axis. */
  set(r: Range): void {
    this.range = clampRange(r, this.extent, this.axis);
    this.ui.view[this.axis] = [this.range[0], this.range[1]];
    this.changed();
  }

  /** Places the view on a newly fetched extent; `hasData` says a window was shown before, `selected` where the selection is. */
  place(extent: Range, placement: Placement, hasData: boolean, selected?: number): void {
    const axis = this.axis;
    const saved = this.ui.view[axis];
    const span = this.range[1] - this.range[0];
    this.extent = extent;
    if (placement === 'restore' && saved !== null) this.range = clampRange(saved, extent, axis);
    else if (placement === 'follow' && hasData) this.range = clampRange([extent[1] - span, extent[1] + span * 0.02], extent, axis);
    else if (placement === 'keep' && hasData) this.range = clampRange(this.range, extent, axis);
    else this.range = fitRange(extent);
    if (selected !== undefined && placement !== 'keep') this.range = reveal(this.range, selected, extent, axis);
  }

  /** Switches the axis; returns how to place the view on the new axis's extent. */
  setAxis(axis: Axis): Placement {
    this.ui.axis = axis;
    return this.ui.view[axis] !== null ? 'restore' : 'fit';
  }

  /** Where a zoom anchors (0..1 across the view): at `x` when it is in view, else the centre. */
  anchorAt(x: number | undefined): number {
    const [from, to] = this.range;
    return x !== undefined && x >= from && x <= to ? (x - from) / (to - from) : 0.5;
  }

  /** Zooms by `factor` (< 1 zooms in) keeping the point at `anchor` still. */
  zoom(factor: number, anchor: number): void {
    this.set(zoomAt(this.range, factor, anchor, this.extent, this.axis));
  }

  /** Pans by a fraction of the view's width (negative = towards the start). */
  pan(fraction: number): void {
    this.set(panBy(this.range, fraction, this.extent, this.axis));
  }

  fitAll(): void {
    this.set(fitRange(this.extent));
  }

  fitPoints(xs: readonly number[]): void {
    this.set(fitPoints(xs, this.extent, this.axis));
  }

  /** The start (or end) of the run, keeping the view's width. */
  toStart(): void {
    const start = fitRange(this.extent)[0];
    this.set([start, start + (this.range[1] - this.range[0])]);
  }

  toEnd(): void {
    const end = fitRange(this.extent)[1];
    this.set([end - (this.range[1] - this.range[0]), end]);
  }

  /** Moves the view the least so that `x` is in it; nothing changes when it already is. */
  reveal(x: number): void {
    const next = reveal(this.range, x, this.extent, this.axis);
    if (next !== this.range) this.set(next);
  }

  /**
   * A wheel over the plot: a mostly horizontal wheel (or Shift with a vertical one)
   * pans, a vertical one zooms at `anchor`, the pointer's place across the plot.
   */
  wheel(w: Wheel, anchor: number, plotWidth: number): void {
    const dx = w.shiftKey ? w.deltaY || w.deltaX : w.deltaX;
    if (Math.abs(dx) > Math.abs(w.shiftKey ? 0 : w.deltaY)) return this.pan(dx / plotWidth);
    this.zoom(Math.exp(w.deltaY * WHEEL_ZOOM), Math.max(0, Math.min(1, anchor)));
  }

  /** A drag `dx` pixels to the right of where it started on `start`: the content follows the pointer. */
  drag(start: Range, dx: number, plotWidth: number): void {
    const d = (dx / plotWidth) * (start[1] - start[0]);
    this.set([start[0] - d, start[1] - d]);
  }

  /** Scrolls the lanes by `dy` pixels, within 0..`max`. */
  scrollBy(dy: number, max: number): void {
    this.scrollY = Math.max(0, Math.min(max, this.scrollY + dy));
  }

  /** Keeps the scroll within 0..`max` (lanes may have shrunk). */
  clampScroll(max: number): void {
    this.scrollY = Math.min(this.scrollY, max);
  }

  /** Scrolls the least so that the band [y, y + height) is in a view `viewHeight` tall. */
  scrollToShow(y: number, height: number, viewHeight: number): void {
    if (y < this.scrollY) this.scrollY = y;
    else if (y + height > this.scrollY + viewHeight) this.scrollY = y + height - viewHeight;
  }
}
