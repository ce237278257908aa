/**
 * The timeline's input (as Perfetto's pan_and_zoom_handler): wheel, drag and clicks on
 * the canvas, and the keyboard on the whole page, turned into changes of the view
 * state or actions of keys.ts. What is under the pointer is the app's to say.
 */
import { actionFor, type Action } from './keys';
import { GUTTER } from './layout';
import type { Range } from './viewport';
import type { ViewState } from './view-state';

export interface InputTarget {
  readonly view: ViewState;
  plotWidth(): number;
  /** How far the lanes can scroll. */
  maxScroll(): number;
  redraw(): void;
  /** The axis position under canvas x, once a window is drawn. */
  xAt(px: number): number | undefined;
  /** A click that did not drag: select what is there. */
  click(px: number, py: number): void;
  hover(px: number, py: number): void;
  leave(): void;
  run(action: Action): void;
}

/** Pointer travel (px, both axes summed) below which a press is a click, not a drag. */
const DRAG_SLOP = 3;

/** Keys that mean the timeline only when it has focus; elsewhere they move through controls. */
const CANVAS_ONLY: ReadonlySet<Action> = new Set(['prevEvent', 'nextEvent', 'laneUp', 'laneDown', 'openSource']);

export function bindInput(canvas: HTMLCanvasElement, t: InputTarget): void {
  let drag: { startX: number; startY: number; startView: Range; moved: boolean; range: boolean } | undefined;
  const anchor = (px: number): number => (px - GUTTER) / t.plotWidth();

  canvas.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      if (e.altKey) {
        t.view.scrollBy(e.deltaY, t.maxScroll());
        t.redraw();
      } else t.view.wheel(e, anchor(e.offsetX), t.plotWidth());
    },
    { passive: false },
  );
  canvas.addEventListener('pointerdown', (e) => {
    canvas.setPointerCapture(e.pointerId);
    canvas.focus();
    drag = { startX: e.offsetX, startY: e.offsetY, startView: t.view.range, moved: false, range: e.shiftKey };
  });
  canvas.addEventListener('pointermove', (e) => {
    if (drag === undefined || (e.buttons & 1) !== 1) return t.hover(e.offsetX, e.offsetY);
    if (Math.abs(e.offsetX - drag.startX) + Math.abs(e.offsetY - drag.startY) > DRAG_SLOP) drag.moved = true;
    if (drag.moved && !drag.range) t.view.drag(drag.startView, e.offsetX - drag.startX, t.plotWidth());
  });
  canvas.addEventListener('pointerup', (e) => {
    const d = drag;
    drag = undefined;
    if (d === undefined) return;
    if (!d.moved) return t.click(e.offsetX, e.offsetY);
    if (!d.range) return;
    const a = t.xAt(Math.min(d.startX, e.offsetX));
    const b = t.xAt(Math.max(d.startX, e.offsetX));
    if (a !== undefined && b !== undefined) t.view.set([a, b]);
  });
  canvas.addEventListener('pointerleave', () => t.leave());
  canvas.addEventListener('dblclick', (e) => {
    const at = anchor(e.offsetX);
    if (at >= 0) t.view.zoom(0.5, at);
  });
  document.addEventListener('keydown', (e) => {
    const target = e.target as HTMLElement | null;
    const typing = target !== null && (target.tagName === 'INPUT' || target.tagName === 'SELECT' || target.tagName === 'TEXTAREA');
    if (typing) {
      if (e.key === 'Escape') canvas.focus();
      return;
    }
    if (target?.tagName === 'BUTTON' && (e.key === 'Enter' || e.key === ' ')) return;
    const action = actionFor(e);
    if (action === undefined) return;
    if (CANVAS_ONLY.has(action) && document.activeElement !== canvas) return;
    e.preventDefault();
    t.run(action);
  });
}
