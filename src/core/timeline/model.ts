/**
 * The host side of the timeline: holds one run (or two, when comparing) as event
 * stores and answers the webview's requests. No `vscode` and no Node import, so the
 * HTML export runs the very same model inside the page.
 */
import { causality } from '../events/causality';
import type { Event } from '../events/event';
import { compilePattern, type Pattern } from '../events/pattern';
import { compileFilter } from '../events/query';
import { FLAG_SYNTHETIC_TIME, kindCode, type EventStore } from '../events/store';
import { causalAxis, timeAxis, type Axis as AxisData } from './axis';
import { firstDivergence, type Divergence } from './divergence';
import { intervals, type Intervals } from './intervals';
import { laneOrder } from './lanes';
import { faultBands, messageArrows, spans, violations, type Arrows, type Band, type Spans } from './overlays';
import {
  type Axis,
  type CausalData,
  type DetailsData,
  type DiagnosticsData,
  type EventRef,
  type Filter,
  type HostReply,
  type HostRequest,
  type LaneMeta,
  type Meta,
  type Overlays,
  type Row,
  type RunMeta,
  type SearchRequest,
  type SearchResult,
  type Violation,
  type WindowData,
  type WindowRequest,
} from './protocol';
import { chatterOf, type Chatter } from './chatter';
import { aggregateWindow, eventRanks, laneTrees, type LaneTree, type RunView } from './window';

export interface RunSource {
  store: EventStore;
  /** Shown above the lanes, e.g. "lock-waiter-lease-expiry trial 1 · seed 1 · fail: …". */
  label: string;
  inputs: string[];
}

export interface ModelOptions {
  title: string;
  live?: boolean;
  capabilities?: Meta['capabilities'];
}

/** A request the model cannot answer as asked (a bad regex, an event that does not exist). */
export class RequestError extends Error {}

interface AxisState {
  axis: AxisData;
  lanes: () => LaneTree[];
  plainArrows: Intervals;
  chatterArrows: Intervals;
  flaggedArrows: Intervals;
  spanIntervals: Intervals;
}

const CACHE = 4;

/** One run with everything derived from it, computed on first use. */
class Run {
  readonly lanes: LaneMeta[];
  readonly laneOfNode: Int32Array;
  readonly bands: Band[];
  readonly violations: Violation[];
  readonly rank: Uint8Array;
  readonly arrows: Arrows;
  readonly spans: Spans;
  readonly chatter: Chatter;
  /** No event has a time of its own (a log read without a time group). */
  readonly untimed: boolean;
  private readonly axes = new Map<Axis, AxisState>();
  private readonly masks = new Map<string, Uint8Array | undefined>();
  private routerFaults: Map<number, number[]> | undefined;

  constructor(readonly source: RunSource) {
    const { store } = source;
    ({ lanes: this.lanes, laneOfNode: this.laneOfNode } = laneOrder(store));
    this.bands = faultBands(store);
    this.violations = violations(store);
    this.rank = eventRanks(store, this.violations.map((v) => v.index));
    this.arrows = messageArrows(store);
    this.spans = spans(store);
    this.chatter = chatterOf(store, this.arrows);
    this.untimed = store.size > 0 && store.flags.every((f) => (f & FLAG_SYNTHETIC_TIME) !== 0);
  }

  get store(): EventStore {
    return this.source.store;
  }

  axis(name: Axis): AxisState {
    let state = this.axes.get(name);
    if (state === undefined) {
      const axis = name === 'time' ? timeAxis(this.store) : causalAxis(this.store);
      const { arrows } = this;
      const arrowIv = (keep: (a: number) => boolean): Intervals => {
        const ids = Array.from({ length: arrows.size }, (_, a) => a).filter(keep);
        const iv = intervals(
          Float64Array.from(ids, (a) => Math.min(axis.x[arrows.send[a]], axis.x[arrows.end[a]])),
          Float64Array.from(ids, (a) => Math.max(axis.x[arrows.send[a]], axis.x[arrows.end[a]])),
        );
        return { ...iv, order: Uint32Array.from(iv.order, (k) => ids[k]) };
      };
      const { index } = this.spans;
      let trees: LaneTree[] | undefined;
      state = {
        axis,
        lanes: () => (trees ??= laneTrees(this.store, axis, this.rank)),
        plainArrows: arrowIv((a) => arrows.flags[a] === 0 && this.chatter.arrow[a] === 0),
        chatterArrows: arrowIv((a) => this.chatter.arrow[a] === 1),
        flaggedArrows: arrowIv((a) => arrows.flags[a] !== 0),
        spanIntervals: intervals(
          Float64Array.from(index, (i) => axis.x[i]),
          Float64Array.from(index, (i) => Math.max(axis.x[i], axis.at(this.store.ts[i] + this.store.dur[i]))),
        ),
      };
      this.axes.set(name, state);
    }
    return state;
  }

  /** 1 per event passing the filter's kinds, level and text; undefined when they filter nothing. */
  mask(filter: Filter): Uint8Array | undefined {
    const key = JSON.stringify([filter.kinds, filter.minLevel, filter.text, filter.regex]);
    if (this.masks.has(key)) return this.masks.get(key);
    const text = filter.text === undefined || filter.text === '' ? undefined : filter.regex === true ? regex(filter.text) : filter.text;
    const test = compileFilter(this.store, { kinds: filter.kinds, minLevel: filter.minLevel, text });
    let mask: Uint8Array | undefined;
    if (test !== undefined) {
      mask = new Uint8Array(this.store.size);
      for (let i = 0; i < mask.length; i++) if (test(i)) mask[i] = 1;
    }
    if (this.masks.size >= CACHE) this.masks.delete(this.masks.keys().next().value as string);
    this.masks.set(key, mask);
    return mask;
  }

  /** The sends of the arrows that end at `i` (a router's drop of the message). */
  sendsEndingAt(i: number): number[] {
    const out: number[] = [];
    for (let a = 0; a < this.arrows.size; a++) if (this.arrows.end[a] === i) out.push(this.arrows.send[a]);
    return out;
  }

  /** The other ends of the implied edges (vector clocks, cross-service spans) at `i`. */
  impliedPartners(i: number): number[] {
    const out: number[] = [];
    const { arrows } = this;
    for (let a = arrows.implied; a < arrows.size; a++) {
      if (arrows.end[a] === i) out.push(arrows.send[a]);
      else if (arrows.send[a] === i) out.push(arrows.end[a]);
    }
    return out;
  }

  /** Router drops, delays and duplicates per message code. */
  faultsOfMessage(m: number): number[] {
    if (this.routerFaults === undefined) {
      this.routerFaults = new Map();
      const { store } = this;
      for (let i = 0; i < store.size; i++) {
        if (store.kind[i] !== FAULT || store.msgId[i] < 0 || store.nodeName(i) !== 'router') continue;
        const list = this.routerFaults.get(store.msgId[i]) ?? [];
        list.push(i);
        this.routerFaults.set(store.msgId[i], list);
      }
    }
    return this.routerFaults.get(m) ?? [];
  }

  meta(): RunMeta {
    const { store } = this;
    return {
      label: this.source.label,
      inputs: this.source.inputs,
      events: store.size,
      fingerprint: `${store.size}:${store.size > 0 ? store.ts[store.size - 1] : 0}:${store.sources.map((s) => s.file).join('|')}`,
      lanes: this.lanes,
      sources: store.sources.map(({ file, format, events, duplicates, bad, notes, executions }) => ({ file, format, events, duplicates, bad, notes, ...(executions !== undefined && { executions }) })),
      badCount: store.badCount,
      bad: store.bad.slice(0, 50).map(({ file, line, error }) => ({ file, line, error })),
      violations: this.violations,
      messages: this.arrows.implied,
      untimed: this.untimed,
      impliedEdges: this.arrows.size - this.arrows.implied,
      dropped: this.arrows.flags.reduce((n, f) => n + (f & 1), 0),
      chatterTypes: this.chatter.types,
      faultBands: this.bands.length,
    };
  }
}

const FAULT = kindCode('fault');

function regex(source: string): Pattern {
  try {
    return compilePattern(source, 'i');
  } catch (err) {
    throw new RequestError((err as Error).message);
  }
}

export class TimelineModel {
  private runs: Run[];
  private divergence: Divergence | undefined;
  private readonly overlayCache = new Map<Axis, Overlays>();

  constructor(
    runs: readonly RunSource[],
    private readonly opts: ModelOptions,
  ) {
    this.runs = runs.map((r) => new Run(r));
    this.refreshDerived();
  }

  /** Replaces run 0 (new live data) or sets run 1 (a comparison); undefined for run 1 ends the comparison. */
  setRun(run: 0 | 1, source: RunSource | undefined): void {
    if (source === undefined) {
      if (run === 1) this.runs = this.runs.slice(0, 1);
    } else this.runs[run] = new Run(source);
    this.refreshDerived();
  }

  setLive(live: boolean): void {
    this.opts.live = live;
  }

  meta(): Meta {
    const d = this.divergence;
    return {
      title: this.opts.title,
      live: this.opts.live ?? false,
      capabilities: this.opts.capabilities ?? { openSource: false, compare: false },
      runs: this.runs.map((r) => r.meta()),
      ...(d !== undefined && { divergence: { first: d.first, lanes: d.lanes } }),
    };
  }

  /** Clock problems found while deriving happens-before (computed on first call). */
  private diagnostics(reqId: number): DiagnosticsData {
    return {
      type: 'diagnosticsData',
      reqId,
      runs: this.runs.map((r) => {
        const hb = causality(r.store);
        return { clockIssueCount: hb.issueCount, clockIssues: hb.issues.slice(0, 50).map(({ kind, message, events }) => ({ kind, message, events })) };
      }),
    };
  }

  /** The full event, and the inputs of its run (for finding the workspace its source paths are relative to). */
  eventAt(ref: EventRef): { event: Event; inputs: readonly string[] } {
    const run = this.run(ref);
    return { event: run.store.event(ref.index), inputs: run.source.inputs };
  }

  handle(req: HostRequest): HostReply {
    switch (req.type) {
      case 'window':
        return this.window(req);
      case 'details':
        return this.details(req.reqId, req.ref);
      case 'causal':
        return this.causal(req.reqId, req.ref, req.axis);
      case 'search':
        return this.search(req);
      case 'step':
        return this.step(req.reqId, req.ref, req.dir, req.filter);
      case 'diagnostics':
        return this.diagnostics(req.reqId);
    }
  }

  private refreshDerived(): void {
    this.overlayCache.clear();
    this.divergence = this.runs.length === 2 ? firstDivergence(this.runs[0].store, this.runs[1].store) : undefined;
  }

  private run(ref: EventRef): Run {
    const run = this.runs[ref.run];
    if (run === undefined || ref.index >= run.store.size) throw new RequestError(`no event ${ref.index} in run ${ref.run}`);
    return run;
  }

  /** Rows top to bottom: compared runs node by node (A's lane above B's); three or more run by run. */
  private rows(filter: Filter): { rows: Row[]; rowOfNode: Int32Array[] } {
    const hidden = new Set(filter.hiddenLanes);
    const rows: Row[] = [];
    const rowOfNode = this.runs.map((r) => new Int32Array(r.store.nodes.length).fill(-1));
    const names = [...this.runs[0].lanes];
    for (const run of this.runs.slice(1)) for (const lane of run.lanes) if (!names.some((l) => l.name === lane.name)) names.push(lane);
    const add = (r: number, name: string): void => {
      const run = this.runs[r];
      const code = run.store.nodeCode(name);
      if (code < 0 || run.laneOfNode[code] < 0) return;
      rowOfNode[r][code] = rows.length;
      rows.push({ run: r, lane: run.laneOfNode[code], node: name, role: run.lanes[run.laneOfNode[code]].role });
    };
    const shown = names.filter(({ name }) => !hidden.has(name));
    // Two runs are compared lane by lane; more (a log's executions) read best as ShiViz shows them, one run's lanes together.
    if (this.runs.length > 2) this.runs.forEach((_, r) => shown.forEach(({ name }) => add(r, name)));
    else for (const { name } of shown) this.runs.forEach((_, r) => add(r, name));
    return { rows, rowOfNode };
  }

  private extent(axis: Axis): [number, number] {
    let lo = Infinity;
    let hi = -Infinity;
    for (const run of this.runs) {
      if (run.store.size === 0) continue;
      const [a, b] = run.axis(axis).axis.extent;
      lo = Math.min(lo, a);
      hi = Math.max(hi, b);
    }
    if (lo === Infinity) return [0, 1];
    return hi > lo ? [lo, hi] : [lo, lo + 1];
  }

  private window(req: WindowRequest): WindowData {
    const extent = this.extent(req.axis);
    const [from, to] = req.range ?? extent;
    if (!(to > from)) throw new RequestError(`empty window [${from}, ${to}]`);
    const { rows, rowOfNode } = this.rows(req.filter);
    const views: RunView[] = this.runs.map((run, r) => ({
      run: r,
      store: run.store,
      ...run.axis(req.axis),
      rank: run.rank,
      arrows: run.arrows,
      spans: run.spans,
      rowOfNode: rowOfNode[r],
      mask: run.mask(req.filter),
      hideChatter: req.filter.hideChatter !== false,
    }));
    const bulk = aggregateWindow(views, rows.length, from, to, req.width, req.overview === true);
    return { type: 'windowData', reqId: req.reqId, axis: req.axis, extent, overview: req.overview === true, rows, overlays: this.overlays(req.axis), ...bulk };
  }

  private overlays(axis: Axis): Overlays {
    let o = this.overlayCache.get(axis);
    if (o !== undefined) return o;
    o = { bands: [], violations: [], divergence: [] };
    for (const [r, run] of this.runs.entries()) {
      const a = run.axis(axis).axis;
      for (const b of run.bands) o.bands.push({ run: r, kind: b.kind, nodes: b.nodes, x0: a.at(b.t0), x1: a.at(b.t1), label: b.label, start: b.start });
      for (const v of run.violations) o.violations.push({ run: r, node: v.node, x: a.x[v.index], index: v.index, text: v.text });
    }
    const d = this.divergence;
    if (d !== undefined) {
      for (const lane of d.lanes) {
        const first = lane === d.first;
        if (lane.a >= 0) o.divergence.push({ run: 0, node: lane.node, x: this.runs[0].axis(axis).axis.x[lane.a], index: lane.a, first });
        if (lane.b >= 0) o.divergence.push({ run: 1, node: lane.node, x: this.runs[1].axis(axis).axis.x[lane.b], index: lane.b, first });
      }
    }
    this.overlayCache.set(axis, o);
    return o;
  }

  private details(reqId: number, ref: EventRef): DetailsData {
    const run = this.run(ref);
    const { store } = run;
    const i = ref.index;
    const hb = causality(store);
    // A router's drop has the message's send as its partner, like a receive.
    const partners = store.kind[i] === FAULT ? run.sendsEndingAt(i) : [...store.partners(i), ...run.impliedPartners(i)];
    const faults = store.msgId[i] >= 0 && store.kind[i] !== FAULT ? run.faultsOfMessage(store.msgId[i]) : [];
    return {
      type: 'details',
      reqId,
      ref,
      event: store.event(i),
      origin: store.origin(i),
      x: { time: store.ts[i], causal: run.axis('causal').axis.x[i] },
      lamport: hb.lamport[i],
      derivedClock: hb.clockOf(i),
      partners: partners.map((p) => ({ ref: { run: ref.run, index: p }, node: store.nodeName(p), kind: store.kindName(p), ts: store.ts[p] })),
      routerFaults: faults.map((f) => ({ ref: { run: ref.run, index: f }, action: store.text(f) ?? 'fault', ts: store.ts[f] })),
      pastSize: hb.past(i).size,
      futureSize: hb.future(i).size,
    };
  }

  private causal(reqId: number, ref: EventRef, axisName: Axis): CausalData {
    const run = this.run(ref);
    const { store } = run;
    const hb = causality(store);
    const { x } = run.axis(axisName).axis;
    const past = new Map(hb.past(ref.index).ranges.map((r) => [r.node, r]));
    const future = new Map(hb.future(ref.index).ranges.map((r) => [r.node, r]));
    const lanes = run.lanes.map(({ name }) => {
      const code = store.nodeCode(name);
      const lane = store.lanes[code];
      const p = past.get(code);
      const f = future.get(code);
      return {
        node: name,
        pastTo: p === undefined ? null : x[lane[p.to - 1]],
        futureFrom: f === undefined ? null : x[lane[f.from]],
        past: p === undefined ? 0 : p.to - p.from,
        future: f === undefined ? 0 : f.to - f.from,
      };
    });
    return { type: 'causalSet', reqId, ref, axis: axisName, lanes };
  }

  /** The next (or previous) match after the current position, over both runs, wrapping at the ends. */
  private search(req: SearchRequest): SearchResult {
    const { rowOfNode } = this.rows(req.filter);
    let matcher: string | Pattern = req.query;
    try {
      if (req.regex) matcher = regex(req.query);
    } catch (err) {
      return { type: 'searchResult', reqId: req.reqId, match: null, position: 0, total: 0, error: (err as Error).message };
    }
    /** Every match as (axis position, run, index), in axis order. */
    const all: { x: number; run: number; index: number; pos: number }[] = [];
    for (const [r, run] of this.runs.entries()) {
      const test = compileFilter(run.store, { text: matcher, fields: req.fields });
      const mask = run.mask(req.filter);
      const { axis } = run.axis(req.axis);
      const visible = rowOfNode[r];
      for (let k = 0; k < axis.sorted.length; k++) {
        const i = axis.order === undefined ? k : axis.order[k];
        if (visible[run.store.node[i]] < 0 || (mask !== undefined && mask[i] === 0) || test === undefined || !test(i)) continue;
        all.push({ x: axis.sorted[k], run: r, index: i, pos: k });
      }
    }
    all.sort((p, q) => p.x - q.x || p.run - q.run || p.pos - q.pos);
    if (all.length === 0) return { type: 'searchResult', reqId: req.reqId, match: null, position: 0, total: 0 };
    const after = req.after;
    const at = after === undefined ? -1 : all.findIndex((m) => m.run === after.run && m.index === after.index);
    let k: number;
    if (at >= 0) k = (at + req.dir + all.length) % all.length;
    else if (req.dir === 1) {
      k = all.findIndex((m) => m.x >= req.from);
      if (k < 0) k = 0;
    } else {
      k = all.length - 1;
      while (k >= 0 && all[k].x > req.from) k--;
      if (k < 0) k = all.length - 1;
    }
    const m = all[k];
    return { type: 'searchResult', reqId: req.reqId, match: { ref: { run: m.run, index: m.index }, x: m.x }, position: k + 1, total: all.length };
  }

  private step(reqId: number, ref: EventRef, dir: 1 | -1, filter: Filter): HostReply {
    const run = this.run(ref);
    const { store } = run;
    const lane = store.lanes[store.node[ref.index]];
    const mask = run.mask(filter);
    for (let p = store.lanePos[ref.index] + dir; p >= 0 && p < lane.length; p += dir) {
      const i = lane[p];
      if (mask !== undefined && mask[i] === 0) continue;
      return { type: 'stepResult', reqId, match: { ref: { run: ref.run, index: i }, x: { time: store.ts[i], causal: run.axis('causal').axis.x[i] } } };
    }
    return { type: 'stepResult', reqId, match: null };
  }
}
