/**
 * The timeline webview app: wires the parts together and owns the data. It asks the
 * host for the run's overview and the visible window, and draws them through the one
 * redraw scheduler; what is in view is the view state's (view-state.ts), the selected
 * event the selection's (selection.ts), the mouse and keys the input's (input.ts).
 * The same app runs in VS Code and in the HTML export; only the TimelineHost differs.
 */
import { migrateUiState, PROTOCOL_VERSION, runLetter, type Axis, type DiagnosticsData, type EventRef, type Filter, type Meta, type UiState, type WindowData } from '../../src/core/timeline/protocol';
import { HostClient, type TimelineHost } from './client';
import { DetailsPanel } from './details';
import { HelpDialog } from './help';
import { bindInput } from './input';
import type { Action } from './keys';
import { contentHeight, layoutRows, type RowBox } from './layout';
import { Minimap } from './minimap';
import { Renderer, type DrawStats, type Scene } from './render';
import { RedrawScheduler } from './scheduler';
import { Selection } from './selection';
import { onThemeChange, readTheme } from './theme';
import { Toolbar } from './toolbar';
import { formatTime, formatX, type Range } from './viewport';
import { PAN_STEP, ViewState, ZOOM_STEP, type Placement } from './view-state';

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
  counts: { lanes: number; arrows: number; impliedArrows: number; droppedArrows: number; faultBands: number; violations: number; events: number };
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

export class TimelineApp {
  private state: UiState;
  private meta: Meta | undefined;
  private diagnostics: DiagnosticsData | undefined;
  /** Clock diagnostics are fetched after the next frame (deriving happens-before is the slow part). */
  private diagnosticsDue = false;
  private data: WindowData | undefined;
  private overview: WindowData | undefined;
  private rows: RowBox[] = [];
  private inflight = 0;
  private windowBusy = false;
  private windowDirty = false;
  private idleWaiters: (() => void)[] = [];
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  /** Where the pointer rests over the canvas, so the tooltip follows what is under it after a zoom or pan. */
  private pointer: { px: number; py: number } | undefined;
  private savedText = '';
  private readonly view: ViewState;
  private readonly selection: Selection;
  private readonly redraw: RedrawScheduler;
  private readonly client: HostClient;
  private readonly toolbar: Toolbar;
  private readonly renderer: Renderer;
  private readonly minimap: Minimap;
  private readonly panel: DetailsPanel;
  private readonly help: HelpDialog;
  private readonly canvas = document.createElement('canvas');
  private readonly tooltip = document.createElement('div');
  private readonly detailsRoot = document.createElement('aside');
  private readonly status = document.createElement('div');
  private readonly runsLine = document.createElement('div');
  private readonly announcer = document.createElement('div');
  readonly hook: TimelineHook;

  constructor(
    private readonly root: HTMLElement,
    private readonly host: TimelineHost,
  ) {
    this.state = migrateUiState(host.loadState());
    this.redraw = new RedrawScheduler(() => {
      this.drawNow();
      this.settle();
    });
    this.view = new ViewState(this.state, () => {
      this.requestWindow();
      this.redraw.schedule();
    });
    const theme = readTheme(document.body);
    this.toolbar = new Toolbar({
      setAxis: (axis) => this.setAxis(axis),
      fitAll: () => this.run('fitAll'),
      fitSelection: () => this.run('fitSelection'),
      setFilter: (patch) => this.setFilter(patch),
      search: (dir, fromInput) => void this.search(dir).then(() => {
        // Enter searched: the keys (n, N, arrows) go to the timeline again, not into the box.
        if (fromInput) this.canvas.focus();
      }),
      searchChanged: (search) => {
        this.state.search = search;
        this.toolbar.setSearchStatus('', false);
        this.save();
      },
      violation: (dir) => this.selection.violation(dir),
      divergence: () => this.run('divergence'),
      compare: () => this.client.compare((this.meta?.runs.length ?? 1) > 1),
      toggleFollow: () => this.run('toggleFollow'),
      toggleDetails: () => this.run('toggleDetails'),
      help: () => this.run('help'),
    });
    this.help = new HelpDialog(() => this.canvas.focus());
    this.buildDom();
    this.renderer = new Renderer(this.canvas, theme);
    const minimapCanvas = this.runsLine.querySelector('canvas');
    if (minimapCanvas === null) throw new Error('minimap canvas missing');
    this.minimap = new Minimap(minimapCanvas, theme, { setView: (r) => this.view.set(r) });
    this.panel = new DetailsPanel(this.detailsRoot, { select: (ref) => void this.selection.select(ref, true), openSource: (ref) => this.client.openSource(ref) });
    this.client = new HostClient(host, {
      meta: (meta, reason) => void this.onMeta(meta, reason),
      error: (message) => this.error(message),
    });
    this.selection = new Selection({
      client: this.client,
      ui: this.state,
      view: this.view,
      panel: this.panel,
      meta: () => this.meta,
      diagnostics: () => this.diagnostics,
      shown: () => (this.data === undefined ? undefined : { data: this.data, rows: this.rows }),
      viewHeight: () => this.renderer.viewHeight,
      track: (p) => this.track(p),
      announce: (text) => this.announce(text),
      redraw: () => this.redraw.schedule(),
    });
    this.hook = this.createHook();
    window.__ddbenchTimeline = this.hook;
    onThemeChange(() => {
      const t = readTheme(document.body);
      this.renderer.setTheme(t);
      this.minimap.setTheme(t);
      this.redraw.schedule();
    });
    new ResizeObserver(() => this.resized()).observe(this.canvas);
    bindInput(this.canvas, {
      view: this.view,
      plotWidth: () => this.renderer.plotWidth,
      maxScroll: () => this.maxScroll(),
      redraw: () => this.redraw.schedule(),
      xAt: (px) => {
        const scene = this.scene();
        return scene === undefined ? undefined : this.renderer.xAt(scene, px);
      },
      click: (px, py) => {
        const scene = this.scene();
        const hit = scene === undefined ? undefined : this.renderer.hit(scene, px, py);
        if (hit?.kind === 'event') void this.selection.select(hit.ref, false);
      },
      hover: (px, py) => {
        this.pointer = { px, py };
        this.hover(px, py);
      },
      leave: () => {
        this.pointer = undefined;
        this.tooltip.hidden = true;
      },
      run: (action) => this.run(action),
    });
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
    this.root.replaceChildren(this.toolbar.root, this.runsLine, stage, this.detailsRoot, this.status, this.help.root, this.announcer);
  }

  // ---- data ----

  private async onMeta(meta: Meta, reason: 'init' | 'update'): Promise<void> {
    const first = this.meta === undefined;
    this.meta = meta;
    this.diagnosticsDue = true;
    // Other data than the saved view was of (a new run): start afresh, not at the old zoom and search.
    const fresh = reason === 'init' && first && this.startAfresh(meta);
    if (reason === 'init' && first && !fresh) this.selection.restore(meta);
    this.state.inputs = meta.runs.map((r) => r.inputs);
    this.updateChrome();
    if (this.selection.current === undefined) this.selection.showSummary();
    else if (reason === 'update') await this.selection.refresh();
    await this.loadOverview(fresh ? 'fit' : reason === 'init' && first ? 'restore' : this.state.follow ? 'follow' : 'keep');
    // A failing run opens at what failed.
    if (fresh && meta.runs.some((r) => r.violations.length > 0)) this.selection.violation(1);
  }

  /** True when `meta` is not the data the saved state was of; then the view, search and selection are reset. */
  private startAfresh(meta: Meta): boolean {
    const fingerprints = meta.runs.map((r) => r.fingerprint);
    const fresh = JSON.stringify(this.state.runs ?? []) !== JSON.stringify(fingerprints);
    this.state.runs = fingerprints;
    if (!fresh) return false;
    this.state.view = { time: null, causal: null };
    // A log with no times (ShiViz's, most often) has only an order: its time axis would be the line numbers.
    if (meta.runs.every((r) => r.untimed)) this.state.axis = 'causal';
    this.state.search = { query: '', regex: false, fields: false };
    this.state.selection = null;
    this.toolbar.setSearchStatus('', false);
    return true;
  }

  private async loadDiagnostics(): Promise<void> {
    const d = await this.track(this.client.request({ type: 'diagnostics' }));
    if (d === undefined || this.meta === undefined) return;
    this.diagnostics = d;
    this.selection.showSummary();
  }

  /** Fetches the overview (which also gives the extent), then places the view and fetches the window. */
  private async loadOverview(placement: Placement): Promise<void> {
    if (this.meta === undefined) return;
    this.minimap.resize();
    const axis = this.state.axis;
    const overview = await this.track(this.client.request({ type: 'window', axis, width: this.minimap.plotWidth, filter: this.state.filter, overview: true }));
    if (overview === undefined || overview.axis !== this.state.axis) return;
    this.overview = overview;
    this.view.place(overview.extent, placement, this.data !== undefined, this.selection.current?.x);
    this.requestWindow();
    this.redraw.schedule();
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
    const range = this.view.range;
    const asked = performance.now();
    void this.track(this.client.request({ type: 'window', axis, range: [range[0], range[1]], width: this.renderer.plotWidth, filter: this.state.filter }))
      .then((data) => {
        if (data !== undefined && data.axis === this.state.axis) {
          this.hook.windowMs = performance.now() - asked;
          this.data = data;
          this.rows = layoutRows(data, this.renderer.viewHeight);
          this.toolbar.setFilterInvalid(false);
          this.redraw.schedule();
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
    if (this.inflight > 0 || this.redraw.pending || this.windowBusy) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  // ---- what is shown ----

  private setAxis(axis: Axis): void {
    if (axis === this.state.axis) return;
    const placement = this.view.setAxis(axis);
    this.data = undefined;
    this.selection.axisChanged();
    this.updateChrome();
    void this.loadOverview(placement).then(() => this.selection.loadCausal());
  }

  private setFilter(patch: Partial<Filter>): void {
    this.state.filter = { ...this.state.filter, ...patch };
    this.updateChrome();
    void this.loadOverview('keep');
  }

  private async search(dir: 1 | -1): Promise<void> {
    const { query, regex, fields } = this.state.search;
    if (query === '') {
      this.toolbar.searchInput.focus();
      return;
    }
    const sel = this.selection.current;
    const range = this.view.range;
    const result = await this.track(
      this.client.request({
        type: 'search',
        axis: this.state.axis,
        filter: this.state.filter,
        query,
        regex,
        fields,
        from: sel?.x ?? (range[0] + range[1]) / 2,
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
    if (result.match !== null) await this.selection.select(result.match.ref, true);
    else this.announce('no match');
  }

  /** Runs a keyboard or toolbar action. */
  private run(action: Action): void {
    const view = this.view;
    const sel = this.selection.current;
    switch (action) {
      case 'zoomIn':
        return view.zoom(ZOOM_STEP, view.anchorAt(sel?.x));
      case 'zoomOut':
        return view.zoom(1 / ZOOM_STEP, view.anchorAt(sel?.x));
      case 'panLeft':
        return view.pan(-PAN_STEP);
      case 'panRight':
        return view.pan(PAN_STEP);
      case 'prevEvent':
        return void this.selection.step(-1);
      case 'nextEvent':
        return void this.selection.step(1);
      case 'laneUp':
        return this.selection.changeLane(-1);
      case 'laneDown':
        return this.selection.changeLane(1);
      case 'fitAll':
        return view.fitAll();
      case 'fitSelection':
        return this.selection.fit();
      case 'partner':
        return this.selection.partner();
      case 'openSource':
        if (sel !== undefined && this.selection.details?.event.src !== undefined) this.client.openSource({ run: sel.run, index: sel.index });
        return;
      case 'clearSelection':
        return this.help.open ? this.help.toggle(false) : this.selection.clear();
      case 'search':
        return this.toolbar.searchInput.focus();
      case 'nextMatch':
        return void this.search(1);
      case 'prevMatch':
        return void this.search(-1);
      case 'nextViolation':
        return this.selection.violation(1);
      case 'prevViolation':
        return this.selection.violation(-1);
      case 'divergence':
        return this.goToDivergence();
      case 'toggleAxis':
        return this.setAxis(this.state.axis === 'time' ? 'causal' : 'time');
      case 'toggleDetails':
        this.state.detailsOpen = !this.state.detailsOpen;
        this.updateChrome();
        return;
      case 'toggleFollow':
        this.state.follow = !this.state.follow;
        this.updateChrome();
        if (this.state.follow) void this.loadOverview('follow');
        return;
      case 'home':
        return view.toStart();
      case 'end':
        return view.toEnd();
      case 'help':
        return this.help.toggle(!this.help.open);
    }
  }

  private goToDivergence(): void {
    const first = this.meta?.divergence?.first;
    if (first == null) return this.announce('the runs do not diverge, or only one run is shown');
    const marks = (this.overview?.overlays.divergence ?? []).filter((d) => d.first);
    if (marks.length > 0) this.view.fitPoints(marks.map((m) => m.x));
    void this.selection.select(first.a >= 0 ? { run: 0, index: first.a } : { run: 1, index: first.b }, true);
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
    this.redraw.schedule();
  }

  // ---- drawing ----

  private maxScroll(): number {
    return Math.max(0, contentHeight(this.rows) - this.renderer.viewHeight);
  }

  private scene(): Scene | undefined {
    if (this.data === undefined) return undefined;
    this.view.clampScroll(this.maxScroll());
    return {
      axis: this.state.axis,
      view: this.view.range,
      data: this.data,
      rows: this.rows,
      scrollY: this.view.scrollY,
      selection: this.selection.current,
      causal: this.selection.causal,
      compare: (this.meta?.runs.length ?? 1) > 1,
    };
  }

  private drawNow(): DrawStats | undefined {
    this.renderer.resize();
    const scene = this.scene();
    this.minimap.draw(this.overview, this.view.range);
    if (scene === undefined) return undefined;
    const stats = this.renderer.draw(scene);
    if (this.pointer !== undefined && !this.tooltip.hidden) this.hover(this.pointer.px, this.pointer.py);
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
    this.hook.view = this.view.range;
    this.hook.rows = this.rows.map((r) => (scene.compare ? `${r.node}:${runLetter(r.run)}` : r.node));
    const s = this.selection.current;
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
    const range = this.view.range;
    const sampled = d.arrows.send.length < d.arrows.total ? ` (a sample of ${d.arrows.total}: zoom in for all)` : '';
    const step = (d.to - d.from) / d.width;
    const perPixel = this.state.axis === 'time' ? formatTime(step, step) : `${step.toPrecision(2)} Lamport steps`;
    const lod = d.total > stats.buckets ? ` · aggregated: ${perPixel} per pixel` : '';
    const types = [...new Set(this.meta?.runs.flatMap((r) => r.chatterTypes) ?? [])].slice(0, 3).join(', ');
    const chatter = d.chatter.hidden > 0 ? ` · ${d.chatter.hidden} chatter messages (${types}) as a band: zoom in, or show chatter` : '';
    this.status.textContent = `${d.total} events in view · ${stats.arrows} messages${sampled}${chatter} · ${stats.bands} fault periods · ${stats.violations} violations${lod} · ${formatX(this.state.axis, range[0], step)} – ${formatX(this.state.axis, range[1], step)}`;
  }

  private updateChrome(): void {
    const meta = this.meta;
    if (meta === undefined) return;
    this.toolbar.update(meta, this.state.axis, this.state.filter, this.state.follow, this.state.detailsOpen, this.state.search);
    this.detailsRoot.hidden = !this.state.detailsOpen;
    const labels = meta.runs.length > 1 ? meta.runs.map((r, i) => `${runLetter(i)}: ${r.label}`) : [meta.runs[0].label + (meta.live ? ' (live)' : '')];
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
      impliedArrows: meta.runs.reduce((n, r) => n + r.impliedEdges, 0),
      droppedArrows: meta.runs.reduce((n, r) => n + r.dropped, 0),
      faultBands: meta.runs.reduce((n, r) => n + r.faultBands, 0),
      violations: meta.runs.reduce((n, r) => n + r.violations.length, 0),
      events: meta.runs.reduce((n, r) => n + r.events, 0),
    };
    document.title = meta.title;
    this.redraw.schedule();
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
      view: this.view.range,
      rows: [],
      counts: { lanes: 0, arrows: 0, impliedArrows: 0, droppedArrows: 0, faultBands: 0, violations: 0, events: 0 },
      selection: null,
      errors: [],
      setView: (from, to) => this.view.set([from, to]),
      select: (ref) => this.selection.select(ref, true),
      idle: () =>
        new Promise<void>((resolve) => {
          this.idleWaiters.push(resolve);
          this.settle();
        }),
      drawNow: () => this.drawNow(),
    };
  }
}
