/**
 * Draws the timeline on a canvas from the last window the host sent. The window
 * may be for a slightly different range than the view (while a pan or zoom waits
 * for fresh data): everything is placed through the current view, so the old data
 * moves with the mouse at once and the new data replaces it when it comes.
 * Work per frame is proportional to pixels × rows, never to the number of events.
 */
import { EventKind } from '../../src/core/events/event';
import { ARROW, runLetter, type Axis, type BandKind, type CausalData, type EventRef, type WindowData } from '../../src/core/timeline/protocol';
import { GUTTER, HEADER, SPAN_ROW, type RowBox } from './layout';
import type { Theme } from './theme';
import { formatX, ticks, type Range } from './viewport';

const bit = (k: EventKind): number => 1 << EventKind.options.indexOf(k);
const MESSAGE_BITS = bit('send') | bit('recv');
const LEVEL_ERROR = 4;
const LEVEL_WARN = 3;
/** Arrowheads only when there are few enough arrows to tell apart. */
const ARROWHEADS_BELOW = 800;

export interface Scene {
  axis: Axis;
  view: Range;
  data: WindowData;
  rows: readonly RowBox[];
  scrollY: number;
  selection: (EventRef & { x: number; node: string }) | undefined;
  causal: CausalData | undefined;
  /** Runs' labels are shown in lane names when comparing. */
  compare: boolean;
}

/** What the last frame drew, for the test hook and the status line. */
export interface DrawStats {
  ms: number;
  rows: number;
  buckets: number;
  arrows: number;
  droppedArrows: number;
  delayedArrows: number;
  bands: number;
  violations: number;
  labels: number;
  spans: number;
  divergence: number;
  causalLanes: number;
  /** Chatter messages in view drawn as a density band instead of arrows. */
  chatter: number;
}

export type Hit = { kind: 'event'; ref: EventRef; row: number } | { kind: 'band'; label: string } | { kind: 'row'; row: number };

export class Renderer {
  private readonly ctx: CanvasRenderingContext2D;
  private width = 0;
  private height = 0;

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private theme: Theme,
  ) {
    const ctx = canvas.getContext('2d', { alpha: false });
    if (ctx === null) throw new Error('this browser gives no 2D canvas');
    this.ctx = ctx;
  }

  setTheme(theme: Theme): void {
    this.theme = theme;
  }

  /** Matches the canvas's pixels to its CSS size; true when it changed. */
  resize(): boolean {
    const rect = this.canvas.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(rect.width));
    const h = Math.max(1, Math.round(rect.height));
    if (w === this.width && h === this.height && this.canvas.width === Math.round(w * dpr)) return false;
    this.width = w;
    this.height = h;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return true;
  }

  /** The plot's width in CSS pixels: the number of buckets to ask for. */
  get plotWidth(): number {
    return Math.max(1, this.width - GUTTER);
  }

  get viewHeight(): number {
    return Math.max(0, this.height - HEADER);
  }

  px(s: Scene, x: number): number {
    return GUTTER + ((x - s.view[0]) / (s.view[1] - s.view[0])) * this.plotWidth;
  }

  xAt(s: Scene, px: number): number {
    return s.view[0] + ((px - GUTTER) / this.plotWidth) * (s.view[1] - s.view[0]);
  }

  draw(s: Scene): DrawStats {
    const started = performance.now();
    const { ctx, theme: t } = this;
    const stats: DrawStats = { ms: 0, rows: s.rows.length, buckets: 0, arrows: 0, droppedArrows: 0, delayedArrows: 0, bands: 0, violations: 0, labels: 0, spans: 0, divergence: 0, causalLanes: 0, chatter: s.data.chatter.hidden };
    ctx.fillStyle = t.bg;
    ctx.fillRect(0, 0, this.width, this.height);
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, HEADER, this.width, this.height - HEADER);
    ctx.clip();
    this.drawRowBackgrounds(s);
    this.drawGrid(s);
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, HEADER, this.plotWidth, this.height - HEADER);
    ctx.clip();
    stats.bands = this.drawBandFills(s);
    stats.causalLanes = this.drawCausal(s);
    stats.spans = this.drawSpans(s);
    stats.buckets = this.drawBuckets(s);
    this.drawChatter(s);
    Object.assign(stats, this.drawArrows(s));
    // Node faults are what a failure usually turns on: their edges and labels go above the arrows.
    this.drawBandMarks(s);
    stats.divergence = this.drawDivergence(s);
    stats.violations = this.drawViolations(s);
    stats.labels = this.drawLabels(s);
    this.drawSelection(s);
    ctx.restore();
    this.drawLaneNames(s);
    ctx.restore();
    this.drawHeader(s);
    stats.ms = performance.now() - started;
    return stats;
  }

  /** What is under a point of the canvas: the nearest event within a few pixels, a fault period, or a lane. */
  hit(s: Scene, px: number, py: number): Hit | undefined {
    const y = py - HEADER + s.scrollY;
    const r = s.rows.findIndex((row) => y >= row.y && y < row.y + row.height);
    if (r < 0 || py < HEADER) return undefined;
    if (px < GUTTER) return { kind: 'row', row: r };
    const d = s.data;
    const scale = this.plotWidth / (s.view[1] - s.view[0]);
    const bucketPx = ((d.to - d.from) / d.width) * scale;
    const b0 = Math.floor(((this.xAt(s, px) - d.from) / (d.to - d.from)) * d.width);
    const reach = Math.max(1, Math.ceil(5 / Math.max(bucketPx, 0.01)));
    let best = -1;
    let bestDist = Infinity;
    for (let b = Math.max(0, b0 - reach); b <= Math.min(d.width - 1, b0 + reach); b++) {
      const i = d.top[r * d.width + b];
      if (i < 0) continue;
      const dist = Math.abs(b - b0);
      if (dist < bestDist) {
        bestDist = dist;
        best = i;
      }
    }
    if (best >= 0) return { kind: 'event', ref: { run: s.rows[r].run, index: best }, row: r };
    const x = this.xAt(s, px);
    const band = d.overlays.bands.find((b) => b.run === s.rows[r].run && b.nodes.includes(s.rows[r].node) && x >= b.x0 && x <= b.x1);
    if (band !== undefined) return { kind: 'band', label: band.label };
    return { kind: 'row', row: r };
  }

  private rowTop(s: Scene, row: RowBox): number {
    return HEADER + row.y - s.scrollY;
  }

  private visible(s: Scene, row: RowBox): boolean {
    const top = this.rowTop(s, row);
    return top + row.height >= HEADER && top <= this.height;
  }

  private drawRowBackgrounds(s: Scene): void {
    const { ctx, theme: t } = this;
    s.rows.forEach((row, r) => {
      if (!this.visible(s, row)) return;
      const top = this.rowTop(s, row);
      if (r % 2 === 1) {
        ctx.fillStyle = t.laneAlt;
        ctx.fillRect(0, top, this.width, row.height);
      }
      // When comparing, a line between node pairs and none inside a pair.
      const next = s.rows[r + 1];
      if (next !== undefined && (!s.compare || next.node !== row.node)) {
        ctx.fillStyle = t.border;
        ctx.fillRect(0, top + row.height - 1, this.width, 1);
      }
    });
  }

  private drawGrid(s: Scene): void {
    const { ctx, theme: t } = this;
    ctx.fillStyle = t.border;
    ctx.globalAlpha = 0.6;
    for (const v of ticks(s.view, this.plotWidth).values) ctx.fillRect(Math.round(this.px(s, v)), HEADER, 1, this.height - HEADER);
    ctx.globalAlpha = 1;
  }

  private bandColour(kind: BandKind): string {
    const t = this.theme;
    return kind === 'partition' ? t.bandPartition : kind === 'link' ? t.bandLink : kind === 'paused' ? t.bandPaused : kind === 'crashed' ? t.error : t.bandDown;
  }

  /** Each fault band on the rows it covers, as [x0, x1, top, height] (clipped to the view). */
  private *bandRects(s: Scene): Generator<{ band: Scene['data']['overlays']['bands'][number]; x0: number; x1: number; top: number; height: number }> {
    for (const band of s.data.overlays.bands) {
      if (band.x1 < s.view[0] || band.x0 > s.view[1]) continue;
      const x0 = Math.max(GUTTER, this.px(s, band.x0));
      const x1 = Math.min(this.width, Math.max(x0 + 2, this.px(s, band.x1)));
      for (const row of s.rows) {
        if (row.run !== band.run || !band.nodes.includes(row.node) || !this.visible(s, row)) continue;
        yield { band, x0, x1, top: this.rowTop(s, row), height: row.height - 1 };
      }
    }
  }

  /** The bands' fills, under everything else; returns how many bands are in view. */
  private drawBandFills(s: Scene): number {
    const { ctx } = this;
    const drawn = new Set<unknown>();
    for (const r of this.bandRects(s)) {
      drawn.add(r.band);
      ctx.fillStyle = this.bandColour(r.band.kind);
      ctx.globalAlpha = 0.22;
      ctx.fillRect(r.x0, r.top, r.x1 - r.x0, r.height);
    }
    ctx.globalAlpha = 1;
    return drawn.size;
  }

  /** The bands' edges and labels, above the arrows: where a node was killed, paused or cut off, and why. */
  private drawBandMarks(s: Scene): void {
    const { ctx, theme: t } = this;
    ctx.font = `10px ${t.font}`;
    for (const r of this.bandRects(s)) {
      const colour = this.bandColour(r.band.kind);
      ctx.fillStyle = colour;
      ctx.fillRect(r.x0, r.top, r.x1 - r.x0, 3);
      ctx.fillRect(r.x0, r.top, 2, r.height);
      if (r.x1 < this.width) ctx.fillRect(r.x1 - 1, r.top, 1, r.height);
      const room = Math.min(r.x1 - r.x0 - 6, 220);
      if (room < 24) continue;
      const text = r.band.label;
      const w = Math.min(room, ctx.measureText(text).width + 6);
      ctx.globalAlpha = 0.9;
      ctx.fillStyle = t.bg;
      ctx.fillRect(r.x0 + 3, r.top + 4, w, 13);
      ctx.globalAlpha = 1;
      ctx.fillStyle = colour;
      ctx.fillText(text, r.x0 + 6, r.top + 14, w - 6);
    }
  }

  /** The selected event's causal past (start of each lane up to a point) and future (from a point on). */
  private drawCausal(s: Scene): number {
    const c = s.causal;
    const sel = s.selection;
    if (c === undefined || sel === undefined || c.axis !== s.axis || c.ref.run !== sel.run || c.ref.index !== sel.index) return 0;
    const { ctx, theme: t } = this;
    let lanes = 0;
    for (const lane of c.lanes) {
      const row = s.rows.find((r) => r.run === sel.run && r.node === lane.node);
      if (row === undefined || !this.visible(s, row)) continue;
      const top = this.rowTop(s, row);
      if (lane.pastTo !== null) {
        ctx.fillStyle = t.past;
        ctx.globalAlpha = 0.2;
        ctx.fillRect(GUTTER, top, Math.max(0, this.px(s, lane.pastTo) - GUTTER + 3), row.height - 1);
        lanes++;
      }
      if (lane.futureFrom !== null) {
        ctx.fillStyle = t.future;
        ctx.globalAlpha = 0.2;
        const x = Math.max(GUTTER, this.px(s, lane.futureFrom) - 3);
        ctx.fillRect(x, top, this.width - x, row.height - 1);
        lanes++;
      }
      ctx.globalAlpha = 1;
    }
    return lanes;
  }

  private drawSpans(s: Scene): number {
    const { ctx, theme: t } = this;
    const sp = s.data.spans;
    ctx.fillStyle = t.span;
    ctx.globalAlpha = 0.75;
    let drawn = 0;
    for (let k = 0; k < sp.row.length; k++) {
      const row = s.rows[sp.row[k]];
      if (row === undefined || !this.visible(s, row)) continue;
      const x0 = this.px(s, sp.x0[k]);
      const x1 = this.px(s, sp.x1[k]);
      if (x1 < GUTTER || x0 > this.width) continue;
      const y = this.rowTop(s, row) + row.spanTop + Math.min(sp.depth[k], 7) * SPAN_ROW;
      ctx.fillRect(x0, y, Math.max(1, x1 - x0 - 1), SPAN_ROW - 1);
      drawn++;
    }
    ctx.globalAlpha = 1;
    return drawn;
  }

  private bucketColour(alarm: number, level: number, kinds: number): string {
    const t = this.theme;
    if (alarm !== 0 || level === LEVEL_ERROR) return t.error;
    if (level === LEVEL_WARN) return t.warn;
    if (kinds & bit('fault')) return t.fault;
    if (kinds & bit('check')) return t.check;
    if (kinds & MESSAGE_BITS) return t.msg;
    if (kinds & bit('span')) return t.span;
    if (kinds & (bit('proc') | bit('state'))) return t.muted;
    return t.log;
  }

  /**
   * One mark per non-empty bucket: a dot for a single event, a bar whose height
   * grows with the log of the count otherwise. Batched by colour (few fillStyle changes).
   */
  /** Hidden chatter as a band along the bottom of each sender's row: darker where more was sent. */
  private drawChatter(s: Scene): void {
    const { ctx, theme: t } = this;
    const d = s.data;
    if (d.chatter.count.length === 0) return;
    const step = (d.to - d.from) / d.width;
    const w = Math.max(1, (step * this.plotWidth) / (s.view[1] - s.view[0]));
    ctx.fillStyle = t.msg;
    for (let r = 0; r < s.rows.length; r++) {
      const row = s.rows[r];
      if (!this.visible(s, row)) continue;
      const y = this.rowTop(s, row) + row.height - 5;
      for (let b = 0; b < d.width; b++) {
        const n = d.chatter.count[r * d.width + b];
        if (n === 0) continue;
        ctx.globalAlpha = Math.min(0.9, 0.2 + Math.log2(n + 1) / 6);
        ctx.fillRect(this.px(s, d.from + b * step), y, w, 3);
      }
    }
    ctx.globalAlpha = 1;
  }

  private drawBuckets(s: Scene): number {
    const { ctx } = this;
    const d = s.data;
    const bucketPx = ((d.to - d.from) / d.width) * (this.plotWidth / (s.view[1] - s.view[0]));
    const barWidth = Math.max(1, bucketPx);
    let maxCount = 1;
    for (let c = 0; c < d.count.length; c++) if (d.count[c] > maxCount) maxCount = d.count[c];
    const logMax = Math.log(maxCount + 1);
    const dots = new Map<string, number[]>();
    const bars = new Map<string, number[]>();
    const alarms: number[] = [];
    let drawn = 0;
    for (let r = 0; r < s.rows.length; r++) {
      const row = s.rows[r];
      if (!this.visible(s, row)) continue;
      const mid = this.rowTop(s, row) + row.mid;
      for (let b = 0; b < d.width; b++) {
        const c = r * d.width + b;
        const n = d.count[c];
        if (n === 0) continue;
        const x = this.px(s, d.from + (b + 0.5) * ((d.to - d.from) / d.width));
        if (x < GUTTER - 4 || x > this.width + 4) continue;
        drawn++;
        const colour = this.bucketColour(d.alarm[c], d.maxLevel[c], d.kinds[c]);
        if (d.alarm[c] !== 0) alarms.push(x, mid);
        if (n === 1) push(dots, colour, x, mid, 0);
        else {
          const h = 6 + 14 * (Math.log(n + 1) / logMax);
          push(bars, colour, x - barWidth / 2, mid - h / 2, h);
        }
      }
    }
    for (const [colour, xs] of bars) {
      ctx.fillStyle = colour;
      for (let k = 0; k < xs.length; k += 3) ctx.fillRect(xs[k], xs[k + 1], barWidth, xs[k + 2]);
    }
    for (const [colour, xs] of dots) {
      ctx.fillStyle = colour;
      ctx.beginPath();
      for (let k = 0; k < xs.length; k += 3) {
        ctx.moveTo(xs[k] + 3.5, xs[k + 1]);
        ctx.arc(xs[k], xs[k + 1], 3.5, 0, Math.PI * 2);
      }
      ctx.fill();
    }
    ctx.fillStyle = this.theme.error;
    for (let k = 0; k < alarms.length; k += 2) diamond(ctx, alarms[k], alarms[k + 1], 7);
    return drawn;
  }

  private drawArrows(s: Scene): Pick<DrawStats, 'arrows' | 'droppedArrows' | 'delayedArrows'> {
    const t = this.theme;
    const a = s.data.arrows;
    const sel = s.selection;
    const out = { arrows: 0, droppedArrows: 0, delayedArrows: 0 };
    const plain: number[] = [];
    const dropped: number[] = [];
    const flagged: number[] = [];
    const chosen: number[] = [];
    for (let k = 0; k < a.send.length; k++) {
      const r0 = s.rows[a.row0[k]];
      const r1 = s.rows[a.row1[k]];
      if (r0 === undefined || r1 === undefined) continue;
      const x0 = this.px(s, a.x0[k]);
      const x1 = this.px(s, a.x1[k]);
      if (Math.max(x0, x1) < GUTTER || Math.min(x0, x1) > this.width) continue;
      const y0 = this.rowTop(s, r0) + r0.mid;
      const y1 = this.rowTop(s, r1) + r1.mid;
      out.arrows++;
      const mine = sel !== undefined && r0.run === sel.run && (a.send[k] === sel.index || a.end[k] === sel.index);
      const list = mine ? chosen : a.flags[k] & ARROW.dropped ? dropped : a.flags[k] !== 0 ? flagged : plain;
      if (a.flags[k] & ARROW.dropped) out.droppedArrows++;
      else if (a.flags[k] !== 0) out.delayedArrows++;
      list.push(x0, y0, x1, y1, a.flags[k]);
    }
    const heads = out.arrows < ARROWHEADS_BELOW;
    this.strokeArrows(plain, t.msg, 0.55, 1, [], heads);
    this.strokeArrows(flagged, t.warn, 0.95, 1.5, [5, 3], true);
    this.strokeArrows(dropped, t.error, 0.95, 1.5, [4, 3], true);
    this.strokeArrows(chosen, t.focus, 1, 2.5, [], true);
    return out;
  }

  private strokeArrows(xs: number[], colour: string, alpha: number, width: number, dash: number[], heads: boolean): void {
    if (xs.length === 0) return;
    const { ctx } = this;
    ctx.strokeStyle = colour;
    ctx.fillStyle = colour;
    ctx.globalAlpha = alpha;
    ctx.lineWidth = width;
    ctx.setLineDash(dash);
    ctx.beginPath();
    for (let k = 0; k < xs.length; k += 5) {
      ctx.moveTo(xs[k], xs[k + 1]);
      ctx.lineTo(xs[k + 2], xs[k + 3]);
    }
    ctx.stroke();
    ctx.setLineDash([]);
    // All crosses in one path and all heads in another: a stroke or fill per mark costs more than the rest of the frame.
    ctx.beginPath();
    for (let k = 0; k < xs.length; k += 5) if (xs[k + 4] & ARROW.dropped) cross(ctx, xs[k + 2], xs[k + 3], 4);
    ctx.stroke();
    if (heads) {
      ctx.beginPath();
      for (let k = 0; k < xs.length; k += 5) if (!(xs[k + 4] & ARROW.dropped)) arrowhead(ctx, xs[k], xs[k + 1], xs[k + 2], xs[k + 3]);
      ctx.fill();
    }
    ctx.globalAlpha = 1;
  }

  private drawDivergence(s: Scene): number {
    const { ctx, theme: t } = this;
    let drawn = 0;
    for (const d of s.data.overlays.divergence) {
      const row = s.rows.find((r) => r.run === d.run && r.node === d.node);
      if (row === undefined || !this.visible(s, row)) continue;
      const x = this.px(s, d.x);
      if (x < GUTTER || x > this.width) continue;
      drawn++;
      const top = this.rowTop(s, row);
      ctx.strokeStyle = t.focus;
      ctx.lineWidth = d.first ? 3 : 1.5;
      ctx.setLineDash(d.first ? [] : [3, 2]);
      ctx.beginPath();
      ctx.moveTo(x, top + 1);
      ctx.lineTo(x, top + row.height - 1);
      ctx.stroke();
      ctx.setLineDash([]);
      if (d.first) {
        ctx.fillStyle = t.focus;
        ctx.font = `bold 10px ${t.font}`;
        ctx.fillText('first divergence', x + 4, top + 9);
      }
    }
    return drawn;
  }

  private drawViolations(s: Scene): number {
    const { ctx, theme: t } = this;
    let drawn = 0;
    for (const v of s.data.overlays.violations) {
      const x = this.px(s, v.x);
      if (x < GUTTER - 1 || x > this.width + 1) continue;
      drawn++;
      ctx.fillStyle = t.error;
      ctx.globalAlpha = 0.7;
      for (const row of s.rows) if (row.run === v.run && this.visible(s, row)) ctx.fillRect(Math.round(x) - 1, this.rowTop(s, row), 2, row.height);
      ctx.globalAlpha = 1;
    }
    return drawn;
  }

  private drawLabels(s: Scene): number {
    const { ctx, theme: t } = this;
    const l = s.data.labels;
    ctx.font = `11px ${t.font}`;
    ctx.fillStyle = t.fg;
    // A halo in the background colour keeps a label readable over the dots and arrows it crosses.
    ctx.strokeStyle = t.bg;
    ctx.lineWidth = 3;
    ctx.lineJoin = 'round';
    const rightmost = new Map<number, number>();
    let drawn = 0;
    for (let k = 0; k < l.row.length; k++) {
      const row = s.rows[l.row[k]];
      if (row === undefined || !this.visible(s, row)) continue;
      const dot = this.px(s, l.x[k]);
      if (dot > this.width || dot < GUTTER) continue;
      const text = fitText(ctx, l.text[k].length > 48 ? `${l.text[k].slice(0, 47)}…` : l.text[k], 260);
      const w = ctx.measureText(text).width;
      // Near the right edge the label goes left of its dot rather than off the canvas.
      const x = dot + 6 + w <= this.width ? dot + 6 : Math.max(GUTTER + 2, dot - 6 - w);
      if (x < (rightmost.get(l.row[k]) ?? -Infinity)) continue;
      const y = this.rowTop(s, row) + row.mid + 4;
      ctx.strokeText(text, x, y);
      ctx.fillText(text, x, y);
      rightmost.set(l.row[k], x + w + 8);
      drawn++;
    }
    return drawn;
  }

  private drawSelection(s: Scene): void {
    const sel = s.selection;
    if (sel === undefined) return;
    const row = s.rows.find((r) => r.run === sel.run && r.node === sel.node);
    const { ctx, theme: t } = this;
    const x = this.px(s, sel.x);
    ctx.strokeStyle = t.focus;
    ctx.globalAlpha = 0.5;
    ctx.setLineDash([2, 3]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(Math.round(x) + 0.5, HEADER);
    ctx.lineTo(Math.round(x) + 0.5, this.height);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.globalAlpha = 1;
    if (row === undefined || !this.visible(s, row)) return;
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.arc(x, this.rowTop(s, row) + row.mid, 7, 0, Math.PI * 2);
    ctx.stroke();
  }

  private drawLaneNames(s: Scene): void {
    const { ctx, theme: t } = this;
    ctx.fillStyle = t.laneAlt;
    ctx.fillRect(0, HEADER, GUTTER - 1, this.height - HEADER);
    ctx.fillStyle = t.border;
    ctx.fillRect(GUTTER - 1, HEADER, 1, this.height - HEADER);
    for (const row of s.rows) {
      if (!this.visible(s, row)) continue;
      const top = this.rowTop(s, row);
      ctx.font = `${row.role === 'node' ? 'bold ' : ''}12px ${t.font}`;
      ctx.fillStyle = row.role === 'node' ? t.fg : t.muted;
      const name = s.compare ? `${row.node}  ${runLetter(row.run)}` : row.node;
      ctx.fillText(fitText(ctx, name, GUTTER - 14), 8, top + row.mid + 4);
    }
  }

  private drawHeader(s: Scene): void {
    const { ctx, theme: t } = this;
    ctx.fillStyle = t.bg;
    ctx.fillRect(0, 0, this.width, HEADER);
    ctx.fillStyle = t.border;
    ctx.fillRect(0, HEADER - 1, this.width, 1);
    ctx.font = `11px ${t.font}`;
    ctx.fillStyle = t.muted;
    ctx.fillText(s.axis === 'time' ? 'wall time' : 'Lamport time', 8, 15, GUTTER - 12);
    const { step, values } = ticks(s.view, this.plotWidth);
    for (const v of values) {
      const x = this.px(s, v);
      ctx.fillRect(Math.round(x), HEADER - 5, 1, 4);
      ctx.fillText(formatX(s.axis, v, step), x + 3, 14);
    }
    ctx.fillStyle = t.error;
    for (const v of s.data.overlays.violations) {
      const x = this.px(s, v.x);
      if (x >= GUTTER && x <= this.width) diamond(ctx, x, HEADER - 7, 6);
    }
  }
}

function push(map: Map<string, number[]>, key: string, a: number, b: number, c: number): void {
  let list = map.get(key);
  if (list === undefined) map.set(key, (list = []));
  list.push(a, b, c);
}

function diamond(ctx: CanvasRenderingContext2D, x: number, y: number, r: number): void {
  ctx.beginPath();
  ctx.moveTo(x, y - r);
  ctx.lineTo(x + r, y);
  ctx.lineTo(x, y + r);
  ctx.lineTo(x - r, y);
  ctx.closePath();
  ctx.fill();
}

/** Adds a cross to the current path (the caller strokes). */
function cross(ctx: CanvasRenderingContext2D, x: number, y: number, r: number): void {
  ctx.moveTo(x - r, y - r);
  ctx.lineTo(x + r, y + r);
  ctx.moveTo(x + r, y - r);
  ctx.lineTo(x - r, y + r);
}

/** Adds an arrowhead to the current path (the caller fills). */
function arrowhead(ctx: CanvasRenderingContext2D, x0: number, y0: number, x1: number, y1: number): void {
  const angle = Math.atan2(y1 - y0, x1 - x0);
  const size = 6;
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - size * Math.cos(angle - 0.4), y1 - size * Math.sin(angle - 0.4));
  ctx.lineTo(x1 - size * Math.cos(angle + 0.4), y1 - size * Math.sin(angle + 0.4));
  ctx.closePath();
}

/**
 * `text` cut to `max` pixels with an ellipsis in the middle, keeping both ends (lane and
 * event names tell apart by their ends: `client-test…NSeconds`), instead of the squeezed
 * glyphs `fillText`'s maxWidth draws.
 */
export function fitText(ctx: CanvasRenderingContext2D, text: string, max: number): string {
  if (ctx.measureText(text).width <= max) return text;
  let lo = 0;
  let hi = text.length;
  const cut = (n: number): string => `${text.slice(0, Math.ceil(n / 2))}…${text.slice(text.length - Math.floor(n / 2))}`;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (ctx.measureText(cut(mid)).width <= max) lo = mid;
    else hi = mid - 1;
  }
  return cut(lo);
}
