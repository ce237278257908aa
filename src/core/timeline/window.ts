/**
 * The visible window, aggregated per pixel (Perfetto's level of detail): per row and
 * pixel bucket the number of events, the worst level, the kinds present and the
 * most important event, plus the arrows, spans and labels that fit the zoom. The
 * cost is one scan of the events in the window and O(width × rows) output, so the
 * renderer's work does not grow with the number of events.
 */
import { kindCode, KINDS, type EventStore } from '../events/store';
import type { EventKind } from '../events/event';
import { lowerBound } from '../events/columns';
import { axisRange, upperBound, type Axis } from './axis';
import { overlapping, type Intervals } from './intervals';
import type { Arrows, Spans } from './overlays';
import type { WindowData } from './protocol';

/** At most this many arrows per window; beyond, an even sample (flagged ones always). */
export const MAX_ARROWS = 3000;
/** At most this many spans per window; below a pixel only the longest per pixel and depth. */
export const MAX_SPANS = 5000;
/** A row gets text labels when its events are at least this far apart on average. */
const LABEL_SPACING_PX = 48;
const MAX_LABELS = 800;

/** One run, prepared for one axis. */
export interface RunView {
  run: number;
  store: EventStore;
  axis: Axis;
  /** Importance of each event: level × 8 + kind weight, + 128 for a failed check. */
  rank: Uint8Array;
  arrows: Arrows;
  /** Arrows without flags, and the flagged ones (drops, delays), which are never sampled away. */
  plainArrows: Intervals;
  flaggedArrows: Intervals;
  /** Unflagged arrows of chatter types (chatter.ts), drawn with the plain ones unless hidden. */
  chatterArrows: Intervals;
  /** Too many chatter arrows in view become a density band (the filter's hideChatter). */
  hideChatter: boolean;
  spans: Spans;
  spanIntervals: Intervals;
  /** Row of each node code, -1 when hidden. */
  rowOfNode: Int32Array;
  /** 1 for events that pass the filter; undefined when nothing is filtered. */
  mask: Uint8Array | undefined;
  /** Per node code, its lane's summary tree on this axis (built on first use, then kept). */
  lanes: () => LaneTree[];
}

/**
 * One lane's events in axis order with a segment tree of their summaries (worst
 * level, kinds present, most important event), so the summary of any run of them
 * costs O(log n): a pixel of a window over a million events does not scan them.
 */
export interface LaneTree {
  x: Float64Array;
  /** Store index of each event, in axis order. */
  index: Uint32Array;
  /** Tree nodes 1..size-1 over leaves size..2·size-1; `top` holds a position in `index`, -1 for none. */
  size: number;
  level: Uint8Array;
  kinds: Uint8Array;
  top: Int32Array;
}

export function laneTrees(store: EventStore, axis: Axis, rank: Uint8Array): LaneTree[] {
  const lanes = store.nodes.map(() => [] as number[]);
  for (let k = 0; k < axis.sorted.length; k++) {
    const i = axis.order === undefined ? k : axis.order[k];
    lanes[store.node[i]].push(i);
  }
  return lanes.map((list) => {
    const size = Math.max(1, list.length);
    const index = Uint32Array.from(list);
    const x = Float64Array.from(list, (i) => axis.x[i]);
    const level = new Uint8Array(2 * size);
    const kinds = new Uint8Array(2 * size);
    const top = new Int32Array(2 * size).fill(-1);
    for (let p = 0; p < list.length; p++) {
      level[size + p] = store.level[list[p]];
      kinds[size + p] = 1 << store.kind[list[p]];
      top[size + p] = p;
    }
    for (let j = size - 1; j >= 1; j--) {
      level[j] = Math.max(level[2 * j], level[2 * j + 1]);
      kinds[j] = kinds[2 * j] | kinds[2 * j + 1];
      top[j] = better(rank, index, top[2 * j], top[2 * j + 1]);
    }
    return { x, index, size, level, kinds, top };
  });
}

/** The more important of two positions; on a tie the earlier, as a scan in axis order keeps. */
function better(rank: Uint8Array, index: Uint32Array, a: number, b: number): number {
  if (a < 0) return b;
  if (b < 0) return a;
  const ra = rank[index[a]];
  const rb = rank[index[b]];
  return ra > rb || (ra === rb && a < b) ? a : b;
}

/** Above this many events per pixel (and with no filter mask) a window is summarised from the lane trees. */
const TREE_ABOVE = 16;

const KIND_WEIGHT: Record<EventKind, number> = { fault: 7, check: 6, state: 5, proc: 4, send: 3, recv: 3, span: 2, log: 1 };
export const VIOLATION_RANK = 128;

/** Per-event importance, so choosing a bucket's representative is one comparison. */
export function eventRanks(store: EventStore, violations: readonly number[]): Uint8Array {
  const weight = Uint8Array.from(KINDS, (k) => KIND_WEIGHT[k]);
  const rank = new Uint8Array(store.size);
  for (let i = 0; i < store.size; i++) rank[i] = store.level[i] * 8 + weight[store.kind[i]];
  for (const v of violations) rank[v] |= VIOLATION_RANK;
  return rank;
}

type Bulk = Omit<WindowData, 'type' | 'reqId' | 'axis' | 'extent' | 'overview' | 'rows' | 'overlays'>;

export function aggregateWindow(views: readonly RunView[], rows: number, from: number, to: number, width: number, overview: boolean): Bulk {
  const cells = rows * width;
  const out: Bulk = {
    from,
    to,
    width,
    total: 0,
    count: new Uint32Array(cells),
    maxLevel: new Uint8Array(cells),
    kinds: new Uint8Array(cells),
    top: new Int32Array(cells).fill(-1),
    alarm: new Uint8Array(cells),
    arrows: { row0: new Uint16Array(0), row1: new Uint16Array(0), x0: new Float64Array(0), x1: new Float64Array(0), flags: new Uint8Array(0), send: new Int32Array(0), end: new Int32Array(0), total: 0 },
    chatter: { count: new Uint32Array(0), hidden: 0 },
    spans: { row: new Uint16Array(0), depth: new Uint8Array(0), x0: new Float64Array(0), x1: new Float64Array(0), index: new Int32Array(0), total: 0 },
    labels: { row: new Uint16Array(0), x: new Float64Array(0), index: new Int32Array(0), text: [] },
  };
  const bucketWidth = (to - from) / width;
  for (const view of views) out.total += fillBuckets(view, out, from, to, width, bucketWidth);
  if (overview) return out;
  out.chatter = hiddenChatter(views, rows, from, to, width);
  out.arrows = windowArrows(views, from, to, width / (to - from));
  out.spans = windowSpans(views, from, to, width, bucketWidth);
  out.labels = windowLabels(views, out, rows, width);
  return out;
}

function fillBuckets(view: RunView, out: Bulk, from: number, to: number, width: number, bucketWidth: number): number {
  const { store, axis, rank, rowOfNode, mask } = view;
  const { node, level, kind } = store;
  const { order, sorted } = axis;
  const { count, maxLevel, kinds, top, alarm } = out;
  const [lo, hi] = axisRange(axis, from, to);
  if (mask === undefined && hi - lo > TREE_ABOVE * width) return fillFromTrees(view, out, from, to, width, bucketWidth);
  let total = 0;
  for (let k = lo; k < hi; k++) {
    const i = order === undefined ? k : order[k];
    const row = rowOfNode[node[i]];
    if (row < 0 || (mask !== undefined && mask[i] === 0)) continue;
    total++;
    let b = Math.floor((sorted[k] - from) / bucketWidth);
    if (b >= width) b = width - 1;
    const c = row * width + b;
    count[c]++;
    if (level[i] > maxLevel[c]) maxLevel[c] = level[i];
    kinds[c] |= 1 << kind[i];
    const t = top[c];
    if (t < 0 || rank[i] > rank[t]) top[c] = i;
    if (rank[i] >= VIOLATION_RANK) alarm[c] = 1;
  }
  return total;
}

/** The same buckets as the scan, each from O(log n) tree nodes per lane: bucket edges are found with the scan's own rounding. */
function fillFromTrees(view: RunView, out: Bulk, from: number, to: number, width: number, bucketWidth: number): number {
  const { rank, rowOfNode } = view;
  const { count, maxLevel, kinds, top, alarm } = out;
  const bucketOf = (x: number): number => Math.min(width - 1, Math.floor((x - from) / bucketWidth));
  let total = 0;
  view.lanes().forEach((lane, code) => {
    const row = rowOfNode[code];
    if (row < 0) return;
    const { x, index, size } = lane;
    const end = upperBound(x, to);
    let start = lowerBound(x, from);
    total += end - start;
    while (start < end) {
      const b = bucketOf(x[start]);
      // The first position of a later bucket.
      let lo = start + 1;
      let hi = end;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (bucketOf(x[mid]) > b) hi = mid;
        else lo = mid + 1;
      }
      let worst = 0;
      let present = 0;
      let best = -1;
      for (let l = start + size, r = lo + size; l < r; l >>= 1, r >>= 1) {
        if (l & 1) {
          worst = Math.max(worst, lane.level[l]);
          present |= lane.kinds[l];
          best = better(rank, index, best, lane.top[l++]);
        }
        if (r & 1) {
          worst = Math.max(worst, lane.level[--r]);
          present |= lane.kinds[r];
          best = better(rank, index, best, lane.top[r]);
        }
      }
      const c = row * width + b;
      count[c] = lo - start;
      maxLevel[c] = worst;
      kinds[c] = present;
      top[c] = index[best];
      if (rank[index[best]] >= VIOLATION_RANK) alarm[c] = 1;
      start = lo;
    }
  });
  return total;
}

interface ArrowOut {
  row0: number[];
  row1: number[];
  x0: number[];
  x1: number[];
  flags: number[];
  send: number[];
  end: number[];
}

/** Below this many chatter arrows in view they are drawn like any other: zoomed in, each one can be told apart. */
export const CHATTER_SHOWN_BELOW = 120;

/** Whether a run's chatter arrows in [from, to] become a density band instead of arrows. */
function chatterHidden(view: RunView, from: number, to: number): boolean {
  if (!view.hideChatter) return false;
  const [lo, hi] = overlapping(view.chatterArrows, from, to);
  return hi - lo >= CHATTER_SHOWN_BELOW;
}

/** The hidden chatter's sends per row and pixel, for the density band. */
function hiddenChatter(views: readonly RunView[], rows: number, from: number, to: number, width: number): Bulk['chatter'] {
  const hiding = views.filter((v) => chatterHidden(v, from, to));
  if (hiding.length === 0) return { count: new Uint32Array(0), hidden: 0 };
  const count = new Uint32Array(rows * width);
  let hidden = 0;
  for (const view of hiding) {
    const { arrows, store, rowOfNode, mask, axis } = view;
    const [lo, hi] = overlapping(view.chatterArrows, from, to);
    for (let k = lo; k < hi; k++) {
      const a = view.chatterArrows.order[k];
      const s = arrows.send[a];
      const row = rowOfNode[store.node[s]];
      if (row < 0 || rowOfNode[arrows.toNode[a]] < 0 || (mask !== undefined && mask[s] === 0)) continue;
      hidden++;
      const b = Math.floor(((axis.x[s] - from) / (to - from)) * width);
      if (b >= 0 && b < width) count[row * width + b]++;
    }
  }
  return { count, hidden };
}

function windowArrows(views: readonly RunView[], from: number, to: number, pxPerUnit: number): Bulk['arrows'] {
  const acc: ArrowOut = { row0: [], row1: [], x0: [], x1: [], flags: [], send: [], end: [] };
  let total = 0;
  // Flagged arrows are never sampled away, but those that would be drawn on the same pixels are one mark.
  const drawn = new Set<string>();
  for (const view of views) {
    const [flo, fhi] = overlapping(view.flaggedArrows, from, to);
    total += collectArrows(view, view.flaggedArrows, flo, fhi, 1, from, acc, { drawn, from, pxPerUnit });
  }
  const plain = views.flatMap((view) => [
    { view, iv: view.plainArrows },
    ...(chatterHidden(view, from, to) ? [] : [{ view, iv: view.chatterArrows }]),
  ]);
  for (const { view, iv } of plain) {
    const [lo, hi] = overlapping(iv, from, to);
    const room = Math.max(1, Math.floor((MAX_ARROWS - acc.send.length) / plain.length));
    const stride = Math.ceil((hi - lo) / room);
    const kept = collectArrows(view, iv, lo, hi, stride, from, acc);
    // A sample's total is an estimate (what was scanned); without sampling it is exact.
    total += stride > 1 ? hi - lo : kept;
  }
  return {
    row0: Uint16Array.from(acc.row0),
    row1: Uint16Array.from(acc.row1),
    x0: Float64Array.from(acc.x0),
    x1: Float64Array.from(acc.x1),
    flags: Uint8Array.from(acc.flags),
    send: Int32Array.from(acc.send),
    end: Int32Array.from(acc.end),
    total,
  };
}

/** Keys of the (rows, flags, end pixels) already holding an arrow, for merging arrows that coincide on screen. */
interface PixelDedup {
  drawn: Set<string>;
  from: number;
  pxPerUnit: number;
}

/**
 * Arrows at positions lo, lo + stride, … whose ends are on shown rows and whose send
 * passes the filter; returns how many passed (with `dedup`, also those merged into
 * an arrow on the same pixels, which are not added again).
 */
function collectArrows(view: RunView, iv: Intervals, lo: number, hi: number, stride: number, from: number, acc: ArrowOut, dedup?: PixelDedup): number {
  const { arrows, store, rowOfNode, mask } = view;
  const before = acc.send.length;
  let merged = 0;
  for (let k = lo; k < hi; k += stride) {
    if (iv.x1[k] < from) continue;
    const a = iv.order[k];
    const s = arrows.send[a];
    const r0 = rowOfNode[store.node[s]];
    const r1 = rowOfNode[arrows.toNode[a]];
    if (r0 < 0 || r1 < 0 || (mask !== undefined && mask[s] === 0)) continue;
    if (dedup !== undefined) {
      const b0 = Math.floor((view.axis.x[s] - dedup.from) * dedup.pxPerUnit);
      const b1 = Math.floor((view.axis.x[arrows.end[a]] - dedup.from) * dedup.pxPerUnit);
      const key = `${r0} ${r1} ${arrows.flags[a]} ${b0} ${b1}`;
      if (dedup.drawn.has(key)) {
        merged++;
        continue;
      }
      dedup.drawn.add(key);
    }
    acc.row0.push(r0);
    acc.row1.push(r1);
    acc.x0.push(view.axis.x[s]);
    acc.x1.push(view.axis.x[arrows.end[a]]);
    acc.flags.push(arrows.flags[a]);
    acc.send.push(s);
    acc.end.push(arrows.end[a]);
  }
  return acc.send.length - before + merged;
}

function windowSpans(views: readonly RunView[], from: number, to: number, width: number, bucketWidth: number): Bulk['spans'] {
  const row: number[] = [];
  const depth: number[] = [];
  const x0: number[] = [];
  const x1: number[] = [];
  const index: number[] = [];
  let total = 0;
  for (const view of views) {
    const iv = view.spanIntervals;
    const [lo, hi] = overlapping(iv, from, to);
    /** Per (row, depth, pixel): the longest span narrower than a pixel, as a position in `iv`. */
    const thin = new Map<number, number>();
    for (let k = lo; k < hi; k++) {
      if (iv.x1[k] < from) continue;
      const s = iv.order[k];
      const i = view.spans.index[s];
      const r = view.rowOfNode[view.store.node[i]];
      if (r < 0 || (view.mask !== undefined && view.mask[i] === 0)) continue;
      total++;
      if (iv.x1[k] - iv.x0[k] >= bucketWidth) {
        if (index.length < MAX_SPANS) push(k, s, r);
        continue;
      }
      const key = (r * 256 + view.spans.depth[s]) * width + Math.max(0, Math.min(width - 1, Math.floor((iv.x0[k] - from) / bucketWidth)));
      const best = thin.get(key);
      if (best === undefined || iv.x1[k] - iv.x0[k] > iv.x1[best] - iv.x0[best]) thin.set(key, k);
    }
    for (const k of thin.values()) if (index.length < MAX_SPANS) push(k, iv.order[k], view.rowOfNode[view.store.node[view.spans.index[iv.order[k]]]]);

    function push(k: number, s: number, r: number): void {
      row.push(r);
      depth.push(view.spans.depth[s]);
      x0.push(iv.x0[k]);
      x1.push(iv.x1[k]);
      index.push(view.spans.index[s]);
    }
  }
  return { row: Uint16Array.from(row), depth: Uint8Array.from(depth), x0: Float64Array.from(x0), x1: Float64Array.from(x1), index: Int32Array.from(index), total };
}

const SEND = kindCode('send');
const RECV = kindCode('recv');

/** A short text for an event on the canvas: its message, with the peer of a send or receive. */
export function labelText(store: EventStore, i: number): string {
  const text = store.text(i) ?? store.kindName(i);
  const peer = store.peer[i] >= 0 ? store.nodes[store.peer[i]] : undefined;
  if (peer !== undefined && store.kind[i] === SEND) return `${text} → ${peer}`;
  if (peer !== undefined && store.kind[i] === RECV) return `${text} ← ${peer}`;
  return text;
}

/** Labels for the representatives of rows sparse enough to read. */
function windowLabels(views: readonly RunView[], out: Bulk, rows: number, width: number): Bulk['labels'] {
  const viewOfRow = new Array<RunView | undefined>(rows);
  for (const view of views) view.rowOfNode.forEach((r) => r >= 0 && (viewOfRow[r] = view));
  const row: number[] = [];
  const x: number[] = [];
  const index: number[] = [];
  const text: string[] = [];
  for (let r = 0; r < rows; r++) {
    const view = viewOfRow[r];
    if (view === undefined) continue;
    let filled = 0;
    for (let b = 0; b < width; b++) if (out.top[r * width + b] >= 0) filled++;
    if (filled === 0 || filled * LABEL_SPACING_PX > width) continue;
    for (let b = 0; b < width && index.length < MAX_LABELS; b++) {
      const i = out.top[r * width + b];
      if (i < 0) continue;
      row.push(r);
      x.push(view.axis.x[i]);
      index.push(i);
      text.push(labelText(view.store, i));
    }
  }
  return { row: Uint16Array.from(row), x: Float64Array.from(x), index: Int32Array.from(index), text };
}
