/**
 * The overview: the whole run's event density (all lanes summed, coloured by the
 * worst level), its fault periods and violations, and the current view as a
 * brush. Click to centre the view there, drag the brush to move it, drag elsewhere
 * to choose a new range.
 */
import type { WindowData } from '../../src/core/timeline/protocol';
import { GUTTER } from './layout';
import type { Theme } from './theme';
import type { Range } from './viewport';

export interface MinimapHandlers {
  /** The user moved or chose a range (axis units). */
  setView(range: Range): void;
}

export class Minimap {
  private readonly ctx: CanvasRenderingContext2D;
  private data: WindowData | undefined;
  private view: Range | undefined;
  private width = 0;
  private readonly height: number;
  private drag: { mode: 'move' | 'select'; startPx: number; startView: Range } | undefined;

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private theme: Theme,
    private readonly handlers: MinimapHandlers,
  ) {
    const ctx = canvas.getContext('2d');
    if (ctx === null) throw new Error('this browser gives no 2D canvas');
    this.ctx = ctx;
    this.height = canvas.getBoundingClientRect().height || 44;
    canvas.addEventListener('pointerdown', (e) => this.down(e));
    canvas.addEventListener('pointermove', (e) => this.move(e));
    canvas.addEventListener('pointerup', (e) => this.up(e));
  }

  setTheme(theme: Theme): void {
    this.theme = theme;
  }

  /** The overview's width in buckets. */
  get plotWidth(): number {
    return Math.max(1, this.width - GUTTER);
  }

  resize(): boolean {
    const rect = this.canvas.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(rect.width));
    if (w === this.width) return false;
    this.width = w;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(this.height * dpr);
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return true;
  }

  draw(data: WindowData | undefined, view: Range): void {
    this.data = data;
    this.view = view;
    const { ctx, theme: t, height } = this;
    ctx.fillStyle = t.laneAlt;
    ctx.fillRect(0, 0, this.width, height);
    ctx.fillStyle = t.muted;
    ctx.font = `11px ${t.font}`;
    ctx.fillText('overview', 8, height / 2 + 4);
    if (data === undefined) return;
    for (const band of data.overlays.bands) {
      ctx.fillStyle = band.kind === 'partition' ? t.bandPartition : band.kind === 'link' ? t.bandLink : band.kind === 'paused' ? t.bandPaused : t.bandDown;
      ctx.globalAlpha = 0.25;
      const x0 = this.px(band.x0);
      ctx.fillRect(x0, 0, Math.max(2, this.px(band.x1) - x0), height);
    }
    ctx.globalAlpha = 1;
    const { width } = data;
    const sum = new Float64Array(width);
    const worst = new Uint8Array(width);
    for (let r = 0; r < data.rows.length; r++) {
      for (let b = 0; b < width; b++) {
        sum[b] += data.count[r * width + b];
        worst[b] = Math.max(worst[b], data.maxLevel[r * width + b]);
      }
    }
    const max = Math.log(Math.max(...sum, 1) + 1);
    const scale = this.plotWidth / width;
    for (let b = 0; b < width; b++) {
      if (sum[b] === 0) continue;
      const h = 3 + (height - 8) * (Math.log(sum[b] + 1) / max);
      ctx.fillStyle = worst[b] >= 4 ? t.error : worst[b] === 3 ? t.warn : t.msg;
      ctx.fillRect(GUTTER + b * scale, height - h, Math.max(1, scale), h);
    }
    ctx.fillStyle = t.error;
    for (const v of data.overlays.violations) ctx.fillRect(this.px(v.x) - 1, 0, 2, height);
    const x0 = this.px(view[0]);
    const x1 = this.px(view[1]);
    ctx.strokeStyle = t.focus;
    ctx.lineWidth = 1.5;
    ctx.fillStyle = t.focus;
    ctx.globalAlpha = 0.15;
    ctx.fillRect(x0, 0, Math.max(2, x1 - x0), height);
    ctx.globalAlpha = 1;
    ctx.strokeRect(x0 + 0.5, 0.5, Math.max(2, x1 - x0) - 1, height - 1);
  }

  private px(x: number): number {
    const d = this.data;
    if (d === undefined) return GUTTER;
    return GUTTER + ((x - d.from) / (d.to - d.from)) * this.plotWidth;
  }

  private xAt(px: number): number {
    const d = this.data;
    if (d === undefined) return 0;
    return d.from + ((px - GUTTER) / this.plotWidth) * (d.to - d.from);
  }

  private down(e: PointerEvent): void {
    if (this.view === undefined || this.data === undefined || e.offsetX < GUTTER) return;
    this.canvas.setPointerCapture(e.pointerId);
    const inside = e.offsetX >= this.px(this.view[0]) && e.offsetX <= this.px(this.view[1]);
    this.drag = { mode: inside ? 'move' : 'select', startPx: e.offsetX, startView: this.view };
  }

  private move(e: PointerEvent): void {
    const drag = this.drag;
    if (drag === undefined || drag.mode !== 'move') return;
    const dx = this.xAt(e.offsetX) - this.xAt(drag.startPx);
    this.handlers.setView([drag.startView[0] + dx, drag.startView[1] + dx]);
  }

  private up(e: PointerEvent): void {
    const drag = this.drag;
    this.drag = undefined;
    if (drag === undefined) return;
    if (drag.mode === 'move') return;
    const span = drag.startView[1] - drag.startView[0];
    if (Math.abs(e.offsetX - drag.startPx) < 4) {
      const x = this.xAt(e.offsetX);
      this.handlers.setView([x - span / 2, x + span / 2]);
    } else {
      const a = this.xAt(Math.min(e.offsetX, drag.startPx));
      const b = this.xAt(Math.max(e.offsetX, drag.startPx));
      this.handlers.setView([a, b]);
    }
  }
}
