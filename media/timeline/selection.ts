/**
 * The selected event: its details and causal past and future (asked of the host),
 * keeping it when live data arrives only if it is still the same event, and moving
 * it: along its lane, to the lane above or below, to its message partner, between
 * invariant violations. The pure choices (which violation is next, which event of a
 * lane is nearest) are functions, tested in Node.
 */
import type { CausalData, DetailsData, DiagnosticsData, EventRef, Meta, UiState, WindowData } from '../../src/core/timeline/protocol';
import type { HostClient } from './client';
import type { DetailsPanel } from './details';
import type { RowBox } from './layout';
import { formatTime } from './viewport';
import type { ViewState } from './view-state';

export interface Selected extends EventRef {
  /** Where it is on the current axis. */
  x: number;
  node: string;
  id: string;
}

/** What the selection needs of the app. */
export interface SelectionContext {
  readonly client: HostClient;
  readonly ui: UiState;
  readonly view: ViewState;
  readonly panel: DetailsPanel;
  meta(): Meta | undefined;
  diagnostics(): DiagnosticsData | undefined;
  /** The window on screen and its laid-out rows, once there is one. */
  shown(): { data: WindowData; rows: readonly RowBox[] } | undefined;
  viewHeight(): number;
  track<T>(p: Promise<T>): Promise<T | undefined>;
  announce(text: string): void;
  redraw(): void;
}

export class Selection {
  current: Selected | undefined;
  details: DetailsData | undefined;
  causal: CausalData | undefined;

  constructor(private readonly c: SelectionContext) {}

  async select(ref: EventRef, revealIt: boolean): Promise<void> {
    const details = await this.c.track(this.c.client.request({ type: 'details', ref }));
    const meta = this.c.meta();
    if (details === undefined || meta === undefined) return;
    this.details = details;
    this.current = { ...ref, x: details.x[this.c.ui.axis], node: details.event.node, id: details.event.id };
    this.c.ui.selection = { ref, fingerprint: meta.runs[ref.run].fingerprint };
    this.c.panel.showEvent(details, meta);
    const e = details.event;
    this.c.announce(`${e.node} ${e.kind} ${e.msg ?? ''} at ${formatTime(e.ts, 1)}`);
    if (revealIt) this.c.view.reveal(this.current.x);
    this.c.redraw();
    await this.loadCausal();
  }

  /** The first data after a reload: selects the saved event if the data is the same. */
  restore(meta: Meta): void {
    const saved = this.c.ui.selection;
    if (saved === null) return;
    if (meta.runs[saved.ref.run]?.fingerprint !== saved.fingerprint) {
      this.c.ui.selection = null;
      return;
    }
    void this.select(saved.ref, false);
  }

  async loadCausal(): Promise<void> {
    const sel = this.current;
    if (sel === undefined) return;
    const causal = await this.c.track(this.c.client.request({ type: 'causal', ref: { run: sel.run, index: sel.index }, axis: this.c.ui.axis }));
    if (causal !== undefined && this.current === sel) {
      this.causal = causal;
      this.c.redraw();
    }
  }

  /** After new live data the index may point at another event: keep the selection only if it is the same one. */
  async refresh(): Promise<void> {
    const sel = this.current;
    if (sel === undefined) return;
    const details = await this.c.track(this.c.client.request({ type: 'details', ref: { run: sel.run, index: sel.index } }));
    if (details?.event.id === sel.id) return;
    this.clear();
  }

  clear(): void {
    this.current = undefined;
    this.details = undefined;
    this.causal = undefined;
    this.c.ui.selection = null;
    this.showSummary();
    this.c.redraw();
  }

  /** The run's summary in the details panel, unless an event is selected. */
  showSummary(): void {
    const meta = this.c.meta();
    if (this.current === undefined && meta !== undefined) this.c.panel.showSummary(meta, this.c.diagnostics());
  }

  /** The axis changed: the selection's place is on the new one (its causal sets are asked again once the view is placed). */
  axisChanged(): void {
    this.causal = undefined;
    const sel = this.current;
    if (sel !== undefined && this.details !== undefined) this.current = { ...sel, x: this.details.x[this.c.ui.axis] };
  }

  /** The previous or next shown event on the selected event's lane; without a selection, the nearest in view. */
  async step(dir: 1 | -1): Promise<void> {
    const sel = this.current;
    if (sel === undefined) return this.changeLane(1);
    const result = await this.c.track(this.c.client.request({ type: 'step', ref: { run: sel.run, index: sel.index }, dir, filter: this.c.ui.filter }));
    if (result?.match != null) await this.select(result.match.ref, true);
    else this.c.announce(dir === 1 ? 'last event on this lane' : 'first event on this lane');
  }

  /** Moves the selection to the lane above or below, to its event nearest in the view's data. */
  changeLane(delta: 1 | -1): void {
    const shown = this.c.shown();
    if (shown === undefined || shown.rows.length === 0) return;
    const { data, rows } = shown;
    const sel = this.current;
    const current = sel === undefined ? -1 : rows.findIndex((r) => r.run === sel.run && r.node === sel.node);
    const target = current < 0 ? 0 : current + delta;
    if (target < 0 || target >= rows.length) return;
    const view = this.c.view.range;
    const index = nearestInRow(data, target, sel?.x ?? (view[0] + view[1]) / 2);
    if (index === undefined) return this.c.announce(`no event of ${rows[target].node} in view`);
    this.c.view.scrollToShow(rows[target].y, rows[target].height, this.c.viewHeight());
    void this.select({ run: rows[target].run, index }, true);
  }

  partner(): void {
    const p = this.details?.partners[0];
    if (p === undefined) this.c.announce('no message partner');
    else void this.select(p.ref, true);
  }

  violation(dir: 1 | -1): void {
    const meta = this.c.meta();
    if (meta === undefined) return;
    const next = nextViolation(meta, this.current, this.details?.event.ts, dir);
    if (next === undefined) this.c.announce('no invariant violations in this run');
    else void this.select(next, true);
  }

  /** The view around the selected event and its message partners. */
  fit(): void {
    const sel = this.current;
    if (sel === undefined) return this.c.announce('nothing selected');
    const xs = [sel.x];
    const shown = this.c.shown();
    const a = shown?.data.arrows;
    if (shown !== undefined && a !== undefined) for (let k = 0; k < a.send.length; k++) if (shown.rows[a.row0[k]]?.run === sel.run && (a.send[k] === sel.index || a.end[k] === sel.index)) xs.push(a.x0[k], a.x1[k]);
    if (this.c.ui.axis === 'time') for (const p of this.details?.partners ?? []) xs.push(p.ts);
    this.c.view.fitPoints(xs);
  }
}

/**
 * The invariant violation to go to from the selection, of all runs in time order:
 * the one after (before) the selected violation, else the first after (last before)
 * the selected event's time; wrapping around. Undefined when there are none.
 */
export function nextViolation(meta: Meta, selected: EventRef | undefined, ts: number | undefined, dir: 1 | -1): EventRef | undefined {
  const all = meta.runs.flatMap((r, run) => r.violations.map((v) => ({ ...v, run }))).sort((a, b) => a.ts - b.ts || a.run - b.run);
  if (all.length === 0) return undefined;
  const current = selected === undefined ? -1 : all.findIndex((v) => v.run === selected.run && v.index === selected.index);
  const from = ts ?? (dir === 1 ? -Infinity : Infinity);
  let k = current >= 0 ? current + dir : dir === 1 ? all.findIndex((v) => v.ts > from) : all.map((v) => v.ts < from).lastIndexOf(true);
  if (k < 0 || k >= all.length) k = dir === 1 ? 0 : all.length - 1;
  return { run: all[k].run, index: all[k].index };
}

/** The most important event of row `row` in the bucket nearest `x` that has one (the left one first on a tie). */
export function nearestInRow(data: Pick<WindowData, 'from' | 'to' | 'width' | 'top'>, row: number, x: number): number | undefined {
  const b0 = Math.floor(((x - data.from) / (data.to - data.from)) * data.width);
  for (let off = 0; off < data.width; off++) {
    for (const b of [b0 - off, b0 + off]) {
      if (b < 0 || b >= data.width) continue;
      const i = data.top[row * data.width + b];
      if (i >= 0) return i;
    }
  }
  return undefined;
}
