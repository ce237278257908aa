/**
 * The timeline webview app: owns the UI state, asks the host for the visible window
 * and the selected event's details and causal sets, and draws. The same app runs
 * in VS Code and in the HTML export; only the TimelineHost differs.
 */
import {
  migrateUiState,
  PROTOCOL_VERSION,
  type Axis,
  type CausalData,
  type DetailsData,
  type DiagnosticsData,
  type EventRef,
  type Filter,
  type Meta,
  type UiState,
  type WindowData,
} from '../../src/core/timeline/protocol';
import { HostClient, type TimelineHost } from './client';
import { DetailsPanel } from './details';

import { actionFor, SHORTCUTS, type Action } from './keys';
import { contentHeight, GUTTER, layoutRows, type RowBox } from './layout';
import { Minimap } from './minimap';
import { Renderer, type DrawStats, type Scene } from './render';
import { onThemeChange, readTheme } from './theme';
import { Toolbar } from './toolbar';
import { clampRange, fitPoints, fitRange, formatTime, formatX, panBy, reveal, zoomAt, type Range } from './viewport';

interface Selection extends EventRef {
  x: number;
  node: string;
  id: string;
}

/** What tests and the benchmark read (and a few things they drive) on `window.__ddbenchTimeline`. */
export interface TimelineHook {
  /** The first frame with data has been drawn. */
  ready: boolean;
  /** When (performance.now()) the first frame with data had been painted and committed; undefined until then. */
  paintedMs: number | undefined;
  frames: number;
  stats: DrawStats | undefined;
  /** The last window's round trip: request, the host's aggregation, the answer checked. */
  windowMs: number;
  axis: Axis;
  view: Range;
  rows: string[];
  counts: { lanes: number; arrows: number; droppedArrows: number; faultBands: number; violations: number; events: number };
  selection: { run: number; index: number; id: string; node: string } | null;
  errors: string[];
  setView(from: number, to: number): void;
  select(ref: EventRef): Promise<void>;
  /** Resolves when no request is in flight and the last answer is drawn. */
  idle(): Promise<void>;
  /** Draws one frame now and returns its cost. */
  drawNow(): DrawStats | undefined;
}

declare global {
  interface Window {
    __ddbenchTimeline?: TimelineHook;
  }
}

const ZOOM_STEP = 0.7;
const PAN_STEP = 0.25;

export class TimelineApp {
  private state: UiState;
  private meta: Meta | undefined;
  private diagnostics: DiagnosticsData | undefined;
  /** Clock diagnostics are fetched after the next frame (deriving happens-before is the slow part). */
  private diagnosticsDue = false;
  private data: WindowData | undefined;
  private overview: WindowData | undefined;
  private rows: RowBox[] = [];
  private view: Range = [0, 1];
  private extent: Range = [0, 1];
  private selection: Selection | undefined;
  private details: DetailsData | undefined;
  private causal: CausalData | undefined;
  private inflight = 0;
  private windowBusy = false;
  private windowDirty = false;
  private frameQueued = false;
  private scrollY = 0;
  private idleWaiters: (() => void)[] = [];
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private savedText = '';
  private drag: { startX: number; startY: number; startView: Range; moved: boolean; range: boolean } | undefined;
  private readonly client: HostClient;
  private readonly toolbar: Toolbar;
  private readonly renderer: Renderer;
  private readonly minimap: Minimap;
  private readonly panel: DetailsPanel;
  private readonly canvas = document.createElement('canvas');
  private readonly tooltip = document.createElement('div');
  private readonly detailsRoot = document.createElement('aside');
  private readonly status = document.createElement('div');
  private readonly runsLine = document.createElement('div');
  private readonly help = document.createElement('div');
  private readonly announcer = document.createElement('div');
  readonly hook: TimelineHook;

  constructor(
    private readonly root: HTMLElement,
    private readonly host: TimelineHost,
  ) {
    this.state = migrateUiState(host.loadState());
    const theme = readTheme(document.body);
    this.toolbar = new Toolbar({
      setAxis: (axis) => this.setAxis(axis),
      fitAll: () => this.run('fitAll'),
      fitSelection: () => this.run('fitSelection'),
      setFilter: (patch) => this.setFilter(patch),
      search: (dir) => void this.search(dir),
      searchChanged: (query, regex) => {
        this.state.search = { query, regex };
        this.toolbar.setSearchStatus('', false);
        this.save();
      },
      violation: (dir) => this.violation(dir),
      divergence: () => this.run('divergence'),
      compare: () => this.client.compare((this.meta?.runs.length ?? 1) > 1),
      toggleFollow: () => this.run('toggleFollow'),
      toggleDetails: () => this.run('toggleDetails'),
      help: () => this.run('help'),
    });
    this.buildDom();
    this.renderer = new Renderer(this.canvas, theme);
    const minimapCanvas = this.runsLine.querySelector('canvas');
    if (minimapCanvas === null) throw new Error('minimap canvas missing');
    this.minimap = new Minimap(minimapCanvas, theme, { setView: (r) => this.setView(r) });
    this.panel = new DetailsPanel(this.detailsRoot, { select: (ref) => void this.select(ref, true), openSource: (ref) => this.client.openSource(ref) });
    this.client = new HostClient(host, {
      meta: (meta, reason) => void this.onMeta(meta, reason),
      error: (message) => this.error(message),
    });
    this.hook = this.createHook();
    window.__ddbenchTimeline = this.hook;
    onThemeChange(() => {
      const t = readTheme(document.body);
      this.renderer.setTheme(t);
      this.minimap.setTheme(t);
      this.frame();
    });
    new ResizeObserver(() => this.resized()).observe(this.canvas);
    this.bindInput();
    this.client.ready(PROTOCOL_VERSION);
  }

  private buildDom(): void {
    const stage = document.createElement('div');
    stage.className = 'stage';
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'application');
    this.canvas.setAttribute('aria-roledescription', 'timeline');
    this.canvas.setAttribute('aria-label', 'Timeline: one lane per node. Arrow keys move between events, W and S zoom, A and D pan, question mark lists every key.');
    this.tooltip.className = 'tooltip';
    this.tooltip.hidden = true;
    stage.append(this.canvas, this.tooltip);
    this.runsLine.className = 'runs';
    const minimap = document.createElement('canvas');
    minimap.className = 'minimap';
    minimap.setAttribute('aria-label', 'Overview of the whole run; click or drag to move the view');
    this.runsLine.append(minimap);
    this.detailsRoot.className = 'details';
    this.detailsRoot.setAttribute('aria-label', 'Event details');
    this.status.className = 'status';
    this.announcer.className = 'sr-only';
    this.announcer.setAttribute('aria-live', 'polite');
    this.help.className = 'help';
    this.help.hidden = true;
    this.help.setAttribute('role', 'dialog');
    this.help.setAttribute('aria-modal', 'true');
    this.help.setAttribute('aria-label', 'Keyboard shortcuts');
    const box = document.createElement('div');
    const title = document.createElement('h2');
    title.textContent = 'Keyboard shortcuts';
    const table = document.createElement('table');
    for (const s of SHORTCUTS) {
      const tr = document.createElement('tr');
      const keys = document.createElement('td');
      s.keys.forEach((k, i) => {
        const kbd = document.createElement('kbd');
        kbd.textContent = k;
        keys.append(...(i > 0 ? [' ', kbd] : [kbd]));
      });
      const label = document.createElement('td');
      label.textContent = s.label;
      tr.append(keys, label);
      table.append(tr);
    }
    const mouse = document.createElement('p');
    mouse.textContent = 'Mouse: wheel zooms at the pointer, Shift+wheel or drag pans, Alt+wheel scrolls lanes, Shift+drag zooms to a range, click selects, double-click zooms in.';
    const close = document.createElement('button');
    close.type = 'button';
    close.textContent = 'Close';
    close.addEventListener('click', () => this.toggleHelp(false));
    box.append(title, table, mouse, close);
    this.help.append(box);
    this.root.replaceChildren(this.toolbar.root, this.runsLine, stage, this.detailsRoot, this.status, this.help, this.announcer);
  }

  // ---- data ----

  private async onMeta(meta: Meta, reason: 'init' | 'update'): Promise<void> {
    const first = this.meta === undefined;
    this.meta = meta;
    this.diagnosticsDue = true;
    if (reason === 'init' && first) this.restoreSelection(meta);
    this.state.inputs = meta.runs.map((r) => r.inputs);
    this.updateChrome();
    if (this.selection === undefined) this.panel.showSummary(meta, this.diagnostics);
    else if (reason === 'update') await this.refreshSelection();
    await this.loadOverview(reason === 'init' && first ? 'restore' : this.state.follow ? 'follow' : 'keep');
  }

  private async loadDiagnostics(): Promise<void> {
    const d = await this.track(this.client.request({ type: 'diagnostics' }));
    if (d === undefined || this.meta === undefined) return;
    this.diagnostics = d;
    if (this.selection === undefined) this.panel.showSummary(this.meta, d);
  }

  private restoreSelection(meta: Meta): void {
    const saved = this.state.selection;
    if (saved === null) return;
    if (meta.runs[saved.ref.run]?.fingerprint !== saved.fingerprint) {
      this.state.selection = null;
      return;
    }
    void this.select(saved.ref, false);
  }

  /** Fetches the overview (which also gives the extent), then places the view and fetches the window. */
  private async loadOverview(place: 'restore' | 'follow' | 'keep' | 'fit'): Promise<void> {
    if (this.meta === undefined) return;
    this.minimap.resize();
    const axis = this.state.axis;
    const overview = await this.track(this.client.request({ type: 'window', axis, width: this.minimap.plotWidth, filter: this.state.filter, overview: true }));
    if (overview === undefined || overview.axis !== this.state.axis) return;
    this.overview = overview;
    this.extent = overview.extent;
    const saved = this.state.view[axis];
    const span = this.view[1] - this.view[0];
    if (place === 'restore' && saved !== null) this.view = clampRange(saved, this.extent, axis);
    else if (place === 'follow' && this.data !== undefined) this.view = clampRange([this.extent[1] - span, this.extent[1] + span * 0.02], this.extent, axis);
    else if (place === 'keep' && this.data !== undefined) this.view = clampRange(this.view, this.extent, axis);
    else this.view = fitRange(this.extent);
    if (this.selection !== undefined && place !== 'keep') this.view = reveal(this.view, this.selection.x, this.extent, axis);
    this.requestWindow();
    this.frame();
  }

  /** Asks for the visible window; while one request is out, later views collapse into one follow-up. */
  private requestWindow(): void {
    if (this.meta === undefined) return;
    if (this.windowBusy) {
      this.windowDirty = true;
      return;
    }
    this.windowBusy = true;
    const axis = this.state.axis;
    const asked = performance.now();
    void this.track(this.client.request({ type: 'window', axis, range: [this.view[0], this.view[1]], width: this.renderer.plotWidth, filter: this.state.filter }))
      .then((data) => {
        if (data !== undefined && data.axis === this.state.axis) {
          this.hook.windowMs = performance.now() - asked;
          this.data = data;
          this.rows = layoutRows(data, this.renderer.viewHeight);
          this.toolbar.setFilterInvalid(false);
          this.frame();
        }
      })
      .finally(() => {
        this.windowBusy = false;
        if (this.windowDirty) {
          this.windowDirty = false;
          this.requestWindow();
        }
      });
  }

  /** Counts requests in flight (for `idle()`) and turns failures into a message. */
  private async track<T>(p: Promise<T>): Promise<T | undefined> {
    this.inflight++;
    try {
      return await p;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/regular expression/.test(message)) this.toolbar.setFilterInvalid(true);
      this.error(message);
      return undefined;
    } finally {
      this.inflight--;
      this.settle();
    }
  }

  private settle(): void {
    if (this.inflight > 0 || this.frameQueued || this.windowBusy) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  // ---- selection ----

  private async select(ref: EventRef, revealIt: boolean): Promise<void> {
    const details = await this.track(this.client.request({ type: 'details', ref }));
    if (details === undefined || this.meta === undefined) return;
    const axis = this.state.axis;
    this.details = details;
    this.selection = { ...ref, x: details.x[axis], node: details.event.node, id: details.event.id };
    this.state.selection = { ref, fingerprint: this.meta.runs[ref.run].fingerprint };
    this.panel.showEvent(details, this.meta);
    const e = details.event;
    this.announce(`${e.node} ${e.kind} ${e.msg ?? ''} at ${formatTime(e.ts, 1)}`);
    if (revealIt) {
      const next = reveal(this.view, this.selection.x, this.extent, axis);
      if (next !== this.view) this.setView(next);
    }
    this.frame();
    await this.loadCausal();
  }

  private async loadCausal(): Promise<void> {
    const sel = this.selection;
    if (sel === undefined) return;
    const causal = await this.track(this.client.request({ type: 'causal', ref: { run: sel.run, index: sel.index }, axis: this.state.axis }));
    if (causal !== undefined && this.selection === sel) {
      this.causal = causal;
      this.frame();
    }
  }

  /** After new live data the index may point at another event: keep the selection only if it is the same one. */
  private async refreshSelection(): Promise<void> {
    const sel = this.selection;
    if (sel === undefined) return;
    const details = await this.track(this.client.request({ type: 'details', ref: { run: sel.run, index: sel.index } }));
    if (details?.event.id === sel.id) return;
    this.clearSelection();
  }

  private clearSelection(): void {
    this.selection = undefined;
    this.details = undefined;
    this.causal = undefined;
    this.state.selection = null;
    if (this.meta !== undefined) this.panel.showSummary(this.meta, this.diagnostics);
    this.frame();
  }

  // ---- view changes ----

  private setView(r: Range): void {
    this.view = clampRange(r, this.extent, this.state.axis);
    this.state.view[this.state.axis] = [this.view[0], this.view[1]];
    this.requestWindow();
    this.frame();
  }

  private setAxis(axis: Axis): void {
    if (axis === this.state.axis) return;
    this.state.axis = axis;
    this.data = undefined;
    this.causal = undefined;
    this.updateChrome();
    const sel = this.selection;
    if (sel !== undefined && this.details !== undefined) this.selection = { ...sel, x: this.details.x[axis] };
    void this.loadOverview(this.state.view[axis] !== null ? 'restore' : 'fit').then(() => this.loadCausal());
  }

  private setFilter(patch: Partial<Filter>): void {
    this.state.filter = { ...this.state.filter, ...patch };
    this.updateChrome();
    void this.loadOverview('keep');
  }

  private async search(dir: 1 | -1): Promise<void> {
    const { query, regex } = this.state.search;
    if (query === '') {
      this.toolbar.searchInput.focus();
      return;
    }
    const sel = this.selection;
    const result = await this.track(
      this.client.request({
        type: 'search',
        axis: this.state.axis,
        filter: this.state.filter,
        query,
        regex,
        from: sel?.x ?? (this.view[0] + this.view[1]) / 2,
        ...(sel !== undefined && { after: { run: sel.run, index: sel.index } }),
        dir,
      }),
    );
    if (result === undefined) return;
    if (result.error !== undefined) {
      this.toolbar.setSearchStatus('bad regex', true);
      this.error(result.error);
      return;
    }
    this.toolbar.setSearchStatus(result.total === 0 ? 'no match' : `${result.position} / ${result.total}`, false);
    if (result.match !== null) await this.select(result.match.ref, true);
    else this.announce('no match');
  }

  private violation(dir: 1 | -1): void {
    const meta = this.meta;
    if (meta === undefined) return;
    const all = meta.runs.flatMap((r, run) => r.violations.map((v) => ({ ...v, run }))).sort((a, b) => a.ts - b.ts || a.run - b.run);
    if (all.length === 0) return this.announce('no invariant violations in this run');
    const sel = this.selection;
    const current = sel === undefined ? -1 : all.findIndex((v) => v.run === sel.run && v.index === sel.index);
    const ts = this.details?.event.ts ?? (dir === 1 ? -Infinity : Infinity);
    let k = current >= 0 ? current + dir : dir === 1 ? all.findIndex((v) => v.ts > ts) : all.map((v) => v.ts < ts).lastIndexOf(true);
    if (k < 0 || k >= all.length) k = dir === 1 ? 0 : all.length - 1;
    void this.select({ run: all[k].run, index: all[k].index }, true);
  }

  private async step(dir: 1 | -1): Promise<void> {
    const sel = this.selection;
    if (sel === undefined) return this.selectNearestInView();
    const result = await this.track(this.client.request({ type: 'step', ref: { run: sel.run, index: sel.index }, dir, filter: this.state.filter }));
    if (result?.match != null) await this.select(result.match.ref, true);
    else this.announce(dir === 1 ? 'last event on this lane' : 'first event on this lane');
  }

  /** Moves the selection to the lane above or below, to its event nearest in the view's data. */
  private changeLane(delta: 1 | -1): void {
    const d = this.data;
    if (d === undefined || this.rows.length === 0) return;
    const sel = this.selection;
    const current = sel === undefined ? -1 : this.rows.findIndex((r) => r.run === sel.run && r.node === sel.node);
    const target = current < 0 ? 0 : current + delta;
    if (target < 0 || target >= this.rows.length) return;
    const x = sel?.x ?? (this.view[0] + this.view[1]) / 2;
    const b0 = Math.floor(((x - d.from) / (d.to - d.from)) * d.width);
    for (let off = 0; off < d.width; off++) {
      for (const b of [b0 - off, b0 + off]) {
        if (b < 0 || b >= d.width) continue;
        const i = d.top[target * d.width + b];
        if (i >= 0) {
          this.scrollToRow(target);
          void this.select({ run: this.rows[target].run, index: i }, true);
          return;
        }
      }
    }
    this.announce(`no event of ${this.rows[target].node} in view`);
  }

  private selectNearestInView(): void {
    this.changeLane(1);
  }

  private scrollToRow(r: number): void {
    const row = this.rows[r];
    const h = this.renderer.viewHeight;
    if (row.y < this.scrollY) this.scrollY = row.y;
    else if (row.y + row.height > this.scrollY + h) this.scrollY = row.y + row.height - h;
  }

  /** Runs a keyboard or toolbar action. */
  private run(action: Action): void {
    const axis = this.state.axis;
    const sel = this.selection;
    const anchor = sel !== undefined && sel.x >= this.view[0] && sel.x <= this.view[1] ? (sel.x - this.view[0]) / (this.view[1] - this.view[0]) : 0.5;
    switch (action) {
      case 'zoomIn':
        return this.setView(zoomAt(this.view, ZOOM_STEP, anchor, this.extent, axis));
      case 'zoomOut':
        return this.setView(zoomAt(this.view, 1 / ZOOM_STEP, anchor, this.extent, axis));
      case 'panLeft':
        return this.setView(panBy(this.view, -PAN_STEP, this.extent, axis));
      case 'panRight':
        return this.setView(panBy(this.view, PAN_STEP, this.extent, axis));
      case 'prevEvent':
        return void this.step(-1);
      case 'nextEvent':
        return void this.step(1);
      case 'laneUp':
        return this.changeLane(-1);
      case 'laneDown':
        return this.changeLane(1);
      case 'fitAll':
        return this.setView(fitRange(this.extent));
      case 'fitSelection':
        return this.fitSelection();
      case 'partner': {
        const p = this.details?.partners[0];
        return p === undefined ? this.announce('no message partner') : void this.select(p.ref, true);
      }
      case 'openSource':
        if (sel !== undefined && this.details?.event.src !== undefined) this.client.openSource({ run: sel.run, index: sel.index });
        return;
      case 'clearSelection':
        return this.help.hidden ? this.clearSelection() : this.toggleHelp(false);
      case 'search':
        return this.toolbar.searchInput.focus();
      case 'nextMatch':
        return void this.search(1);
      case 'prevMatch':
        return void this.search(-1);
      case 'nextViolation':
        return this.violation(1);
      case 'prevViolation':
        return this.violation(-1);
      case 'divergence':
        return this.goToDivergence();
      case 'toggleAxis':
        return this.setAxis(axis === 'time' ? 'causal' : 'time');
      case 'toggleDetails':
        this.state.detailsOpen = !this.state.detailsOpen;
        this.updateChrome();
        return;
      case 'toggleFollow':
        this.state.follow = !this.state.follow;
        this.updateChrome();
        if (this.state.follow) void this.loadOverview('follow');
        return;
      case 'home': {
        const start = fitRange(this.extent)[0];
        return this.setView([start, start + (this.view[1] - this.view[0])]);
      }
      case 'end': {
        const end = fitRange(this.extent)[1];
        return this.setView([end - (this.view[1] - this.view[0]), end]);
      }
      case 'help':
        return this.toggleHelp(this.help.hidden);
    }
  }

  private fitSelection(): void {
    const sel = this.selection;
    if (sel === undefined) return this.announce('nothing selected');
    const xs = [sel.x];
    const a = this.data?.arrows;
    if (a !== undefined) for (let k = 0; k < a.send.length; k++) if (this.rows[a.row0[k]]?.run === sel.run && (a.send[k] === sel.index || a.end[k] === sel.index)) xs.push(a.x0[k], a.x1[k]);
    if (this.state.axis === 'time') for (const p of this.details?.partners ?? []) xs.push(p.ts);
    this.setView(fitPoints(xs, this.extent, this.state.axis));
  }

  private goToDivergence(): void {
    const first = this.meta?.divergence?.first;
    if (first == null) return this.announce('the runs do not diverge, or only one run is shown');
    const marks = (this.overview?.overlays.divergence ?? []).filter((d) => d.first);
    if (marks.length > 0) this.setView(fitPoints(marks.map((m) => m.x), this.extent, this.state.axis));
    void this.select(first.a >= 0 ? { run: 0, index: first.a } : { run: 1, index: first.b }, true);
  }

  private toggleHelp(show: boolean): void {
    this.help.hidden = !show;
    if (show) this.help.querySelector('button')?.focus();
    else this.canvas.focus();
  }

  // ---- input ----

  private bindInput(): void {
    const c = this.canvas;
    c.addEventListener('wheel', (e) => this.onWheel(e), { passive: false });
    c.addEventListener('pointerdown', (e) => {
      c.setPointerCapture(e.pointerId);
      c.focus();
      this.drag = { startX: e.offsetX, startY: e.offsetY, startView: this.view, moved: false, range: e.shiftKey };
    });
    c.addEventListener('pointermove', (e) => this.onPointerMove(e));
    c.addEventListener('pointerup', (e) => this.onPointerUp(e));
    c.addEventListener('pointerleave', () => (this.tooltip.hidden = true));
    c.addEventListener('dblclick', (e) => {
      const anchor = (e.offsetX - GUTTER) / this.renderer.plotWidth;
      if (anchor >= 0) this.setView(zoomAt(this.view, 0.5, anchor, this.extent, this.state.axis));
    });
    document.addEventListener('keydown', (e) => {
      const target = e.target as HTMLElement | null;
      const typing = target !== null && (target.tagName === 'INPUT' || target.tagName === 'SELECT' || target.tagName === 'TEXTAREA');
      if (typing) {
        if (e.key === 'Escape') this.canvas.focus();
        return;
      }
      if (target?.tagName === 'BUTTON' && (e.key === 'Enter' || e.key === ' ')) return;
      const action = actionFor(e);
      if (action === undefined) return;
      // Arrow keys and Enter mean the timeline only when it has focus; elsewhere they move through controls.
      const canvasOnly = action === 'prevEvent' || action === 'nextEvent' || action === 'laneUp' || action === 'laneDown' || action === 'openSource';
      if (canvasOnly && document.activeElement !== this.canvas) return;
      e.preventDefault();
      this.run(action);
    });
  }

  private onWheel(e: WheelEvent): void {
    e.preventDefault();
    const axis = this.state.axis;
    if (e.altKey) {
      const max = Math.max(0, contentHeight(this.rows) - this.renderer.viewHeight);
      this.scrollY = Math.max(0, Math.min(max, this.scrollY + e.deltaY));
      return this.frame();
    }
    const dx = e.shiftKey ? e.deltaY || e.deltaX : e.deltaX;
    if (Math.abs(dx) > Math.abs(e.shiftKey ? 0 : e.deltaY)) return this.setView(panBy(this.view, dx / this.renderer.plotWidth, this.extent, axis));
    const anchor = Math.max(0, Math.min(1, (e.offsetX - GUTTER) / this.renderer.plotWidth));
    this.setView(zoomAt(this.view, Math.exp(e.deltaY * 0.0015), anchor, this.extent, axis));
  }

  private onPointerMove(e: PointerEvent): void {
    const drag = this.drag;
    if (drag !== undefined && (e.buttons & 1) === 1) {
      if (Math.abs(e.offsetX - drag.startX) + Math.abs(e.offsetY - drag.startY) > 3) drag.moved = true;
      if (drag.moved && !drag.range) {
        const dx = ((e.offsetX - drag.startX) / this.renderer.plotWidth) * (drag.startView[1] - drag.startView[0]);
        this.setView([drag.startView[0] - dx, drag.startView[1] - dx]);
      }
      return;
    }
    this.hover(e.offsetX, e.offsetY);
  }

  private onPointerUp(e: PointerEvent): void {
    const drag = this.drag;
    this.drag = undefined;
    if (drag === undefined || this.data === undefined) return;
    const scene = this.scene();
    if (scene === undefined) return;
    if (drag.moved && drag.range) {
      const a = this.renderer.xAt(scene, Math.min(drag.startX, e.offsetX));
      const b = this.renderer.xAt(scene, Math.max(drag.startX, e.offsetX));
      return this.setView([a, b]);
    }
    if (drag.moved) return;
    const hit = this.renderer.hit(scene, e.offsetX, e.offsetY);
    if (hit?.kind === 'event') void this.select(hit.ref, false);
  }

  private hover(px: number, py: number): void {
    const scene = this.scene();
    const hit = scene === undefined ? undefined : this.renderer.hit(scene, px, py);
    if (hit === undefined || hit.kind === 'row' || this.data === undefined) {
      this.tooltip.hidden = true;
      return;
    }
    let text: string;
    if (hit.kind === 'band') text = hit.label;
    else {
      const d = this.data;
      const k = d.labels.index.indexOf(hit.ref.index);
      const row = this.rows[hit.row];
      const b = Math.floor(((this.renderer.xAt(scene!, px) - d.from) / (d.to - d.from)) * d.width);
      const n = b >= 0 && b < d.width ? d.count[hit.row * d.width + b] : 1;
      text = `${row.node}${k >= 0 ? `: ${d.labels.text[k]}` : ''}${n > 1 ? `\n${n} events here (zoom in to tell them apart)` : ''}\nclick to select`;
    }
    this.tooltip.textContent = text;
    this.tooltip.hidden = false;
    this.tooltip.style.left = `${Math.min(px + 14, this.canvas.clientWidth - 260)}px`;
    this.tooltip.style.top = `${py + 14}px`;
  }

  private resized(): void {
    if (this.renderer.resize()) {
      if (this.data !== undefined) this.rows = layoutRows(this.data, this.renderer.viewHeight);
      this.requestWindow();
    }
    if (this.minimap.resize()) void this.loadOverview('keep');
    this.frame();
  }

  // ---- drawing ----

  private scene(): Scene | undefined {
    if (this.data === undefined) return undefined;
    const max = Math.max(0, contentHeight(this.rows) - this.renderer.viewHeight);
    this.scrollY = Math.min(this.scrollY, max);
    return {
      axis: this.state.axis,
      view: this.view,
      data: this.data,
      rows: this.rows,
      scrollY: this.scrollY,
      selection: this.selection,
      causal: this.causal,
      compare: (this.meta?.runs.length ?? 1) > 1,
    };
  }

  private frame(): void {
    if (this.frameQueued) return;
    this.frameQueued = true;
    requestAnimationFrame(() => {
      this.frameQueued = false;
      this.drawNow();
      this.settle();
    });
  }

  private drawNow(): DrawStats | undefined {
    this.renderer.resize();
    const scene = this.scene();
    this.minimap.draw(this.overview, this.view);
    if (scene === undefined) return undefined;
    const stats = this.renderer.draw(scene);
    this.hook.frames++;
    this.hook.stats = stats;
    if (!this.hook.ready) {
      // A task posted from the frame's callback runs once that frame has been painted and committed, before idle work.
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        this.hook.paintedMs = performance.now();
        channel.port1.close();
      };
      channel.port2.postMessage(null);
    }
    this.hook.ready = true;
    this.hook.axis = this.state.axis;
    this.hook.view = this.view;
    this.hook.rows = this.rows.map((r) => (scene.compare ? `${r.node}:${r.run === 0 ? 'A' : 'B'}` : r.node));
    const s = this.selection;
    this.hook.selection = s === undefined ? null : { run: s.run, index: s.index, id: s.id, node: s.node };
    this.updateStatus(stats);
    this.save();
    if (this.diagnosticsDue) {
      this.diagnosticsDue = false;
      // When the browser is idle: in the HTML export deriving happens-before runs on this thread and would hold up the first frame's display.
      requestIdleCallback(() => void this.loadDiagnostics(), { timeout: 2000 });
    }
    return stats;
  }

  private updateStatus(stats: DrawStats): void {
    const d = this.data;
    if (d === undefined) return;
    const sampled = d.arrows.send.length < d.arrows.total ? ` (a sample of ${d.arrows.total}: zoom in for all)` : '';
    const step = (d.to - d.from) / d.width;
    const perPixel = this.state.axis === 'time' ? formatTime(step, step) : `${step.toPrecision(2)} Lamport steps`;
    const lod = d.total > stats.buckets ? ` · aggregated: ${perPixel} per pixel` : '';
    this.status.textContent = `${d.total} events in view · ${stats.arrows} messages${sampled} · ${stats.bands} fault periods · ${stats.violations} violations${lod} · ${formatX(this.state.axis, this.view[0], step)} – ${formatX(this.state.axis, this.view[1], step)}`;
  }

  private updateChrome(): void {
    const meta = this.meta;
    if (meta === undefined) return;
    this.toolbar.update(meta, this.state.axis, this.state.filter, this.state.follow, this.state.detailsOpen, this.state.search);
    this.detailsRoot.hidden = !this.state.detailsOpen;
    const labels = meta.runs.length > 1 ? meta.runs.map((r, i) => `${i === 0 ? 'A' : 'B'}: ${r.label}`) : [meta.runs[0].label + (meta.live ? ' (live)' : '')];
    this.runsLine.querySelectorAll('div.run-label').forEach((n) => n.remove());
    for (const text of labels.reverse()) {
      const line = document.createElement('div');
      line.className = 'run-label';
      line.textContent = text;
      this.runsLine.prepend(line);
    }
    this.hook.counts = {
      lanes: meta.runs.reduce((n, r) => n + r.lanes.length, 0),
      arrows: meta.runs.reduce((n, r) => n + r.messages, 0),
      droppedArrows: meta.runs.reduce((n, r) => n + r.dropped, 0),
      faultBands: meta.runs.reduce((n, r) => n + r.faultBands, 0),
      violations: meta.runs.reduce((n, r) => n + r.violations.length, 0),
      events: meta.runs.reduce((n, r) => n + r.events, 0),
    };
    document.title = meta.title;
    this.frame();
  }

  /** Persists the UI blob when it changed, at most twice a second (a pan changes it every frame). */
  private save(): void {
    if (this.saveTimer !== undefined) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      const text = JSON.stringify(this.state);
      if (text === this.savedText) return;
      this.savedText = text;
      this.host.saveState(this.state);
    }, 500);
  }

  private announce(text: string): void {
    this.announcer.textContent = text;
  }

  private error(message: string): void {
    this.hook.errors.push(message);
    const span = document.createElement('span');
    span.className = 'error';
    span.textContent = message;
    this.status.replaceChildren(span);
  }

  private createHook(): TimelineHook {
    return {
      ready: false,
      paintedMs: undefined,
      frames: 0,
      stats: undefined,
      windowMs: 0,
      axis: this.state.axis,
      view: this.view,
      rows: [],
      counts: { lanes: 0, arrows: 0, droppedArrows: 0, faultBands: 0, violations: 0, events: 0 },
      selection: null,
      errors: [],
      setView: (from, to) => this.setView([from, to]),
      select: (ref) => this.select(ref, true),
      idle: () =>
        new Promise<void>((resolve) => {
          this.idleWaiters.push(resolve);
          this.settle();
        }),
      drawNow: () => this.drawNow(),
    };
  }
}
