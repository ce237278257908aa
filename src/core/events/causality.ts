import type { VectorClock } from './event';
import { lowerBound } from './columns';
import { FLAG_CLOCK, kindCode, type EventStore } from './store';

/**
 * Happens-before over a whole store. Every event gets a derived vector clock from
 * one topological pass over: program order on each node (its lane, in time order),
 * send → receive by message id, the edges its own vector clock implies (an entry
 * n2:7 means "after n2's event with counter 7"), and span parent → child across
 * nodes. So logs with clocks, logs with only message ids, and mixtures all get the
 * same questions answered, and a clock that contradicts the rest is reported.
 *
 * In the derived clock an event's own entry is its position in its lane + 1, so
 * `a → b` is one array read: b's entry for a's node >= a's position + 1. Causal past
 * and future are then a prefix / suffix of each lane (no per-pair work).
 */

export type ClockIssueKind = 'recv-clock-behind-send' | 'missing-own-entry' | 'own-counter-not-increasing' | 'clock-ahead-of-log' | 'cycle';

export interface ClockIssue {
  kind: ClockIssueKind;
  /** What is wrong, naming the events with their file and line. */
  message: string;
  /** The events involved (store indices). */
  events: number[];
}

type Report = (kind: ClockIssueKind, events: number[], message: () => string) => void;

/** Lane positions [from, to) of one node. */
export interface LaneRange {
  node: number;
  from: number;
  to: number;
}

/** Issues kept with their messages; beyond this they are only counted. */
const MAX_ISSUES = 200;
const RECV = kindCode('recv');
const SPAN = kindCode('span');

/** A set of events given as one range per lane: what a causal past or future is. */
export class CausalSet {
  private readonly byNode = new Map<number, LaneRange>();

  constructor(
    private readonly store: EventStore,
    readonly ranges: readonly LaneRange[],
  ) {
    for (const range of ranges) this.byNode.set(range.node, range);
  }

  get size(): number {
    return this.ranges.reduce((sum, r) => sum + (r.to - r.from), 0);
  }

  has(i: number): boolean {
    const range = this.byNode.get(this.store.node[i]);
    const pos = this.store.lanePos[i];
    return range !== undefined && pos >= range.from && pos < range.to;
  }

  /** The members in time order. */
  indices(): Uint32Array {
    const out = new Uint32Array(this.size);
    let k = 0;
    for (const r of this.ranges) {
      const lane = this.store.lanes[r.node];
      for (let p = r.from; p < r.to; p++) out[k++] = lane[p];
    }
    return out.sort();
  }

  /** One bit per store index (bit i of word i >> 5), e.g. to send to a renderer. */
  bitset(): Uint32Array {
    const bits = new Uint32Array((this.store.size + 31) >>> 5);
    for (const r of this.ranges) {
      const lane = this.store.lanes[r.node];
      for (let p = r.from; p < r.to; p++) bits[lane[p] >>> 5] |= 1 << (lane[p] & 31);
    }
    return bits;
  }
}

export class Causality {
  /** Lamport timestamps: a total order consistent with happens-before, for a "causal" layout. */
  readonly lamport: Uint32Array;
  readonly issues: ClockIssue[] = [];
  /** All issues, also those beyond the kept ones. */
  issueCount = 0;
  /** Per node code, its column in the derived clocks, or -1 when no other node ever learns of it. */
  private readonly column: Int32Array;
  private readonly width: number;
  private readonly clocks: Uint32Array;

  constructor(private readonly store: EventStore) {
    const report: Report = (kind, events, message) => this.report(kind, events, message);
    const deps = dependencies(store);
    for (const issue of deps.issues) report(issue.kind, issue.events, issue.message);
    this.issueCount += deps.issueCount - deps.issues.length;
    this.column = new Int32Array(store.nodes.length).fill(-1);
    let width = 0;
    for (const d of deps.list) if (this.column[store.node[d]] < 0) this.column[store.node[d]] = width++;
    this.width = width;
    this.clocks = new Uint32Array(store.size * width);
    this.lamport = new Uint32Array(store.size);
    this.propagate(deps);
    checkClocks(store, report);
  }

  /** True when a happened before b (a → b). */
  happenedBefore(a: number, b: number): boolean {
    if (a === b) return false;
    const { node, lanePos } = this.store;
    if (node[a] === node[b]) return lanePos[a] < lanePos[b];
    const col = this.column[node[a]];
    return col >= 0 && this.clocks[b * this.width + col] >= lanePos[a] + 1;
  }

  /** Neither happened before the other. */
  concurrent(a: number, b: number): boolean {
    return a !== b && !this.happenedBefore(a, b) && !this.happenedBefore(b, a);
  }

  /** Every event that happened before `i`. */
  past(i: number): CausalSet {
    const { node, lanePos, lanes } = this.store;
    const ranges: LaneRange[] = [];
    for (let n = 0; n < lanes.length; n++) {
      const to = n === node[i] ? lanePos[i] : this.column[n] < 0 ? 0 : this.clocks[i * this.width + this.column[n]];
      if (to > 0) ranges.push({ node: n, from: 0, to });
    }
    return new CausalSet(this.store, ranges);
  }

  /** Every event that `i` happened before. */
  future(i: number): CausalSet {
    const { node, lanePos, lanes } = this.store;
    const ranges: LaneRange[] = [];
    const col = this.column[node[i]];
    const need = lanePos[i] + 1;
    for (let n = 0; n < lanes.length; n++) {
      const lane = lanes[n];
      let from = lane.length;
      if (n === node[i]) from = need;
      else if (col >= 0) {
        // Along a lane the derived clocks only grow, so the future starts at one point.
        let lo = 0;
        let hi = lane.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (this.clocks[lane[mid] * this.width + col] >= need) hi = mid;
          else lo = mid + 1;
        }
        from = lo;
      }
      if (from < lane.length) ranges.push({ node: n, from, to: lane.length });
    }
    return new CausalSet(this.store, ranges);
  }

  /**
   * The derived vector clock of `i`: per node, how many of its events happened
   * before or at `i`. Consistent by construction (what ShiViz demands of a log).
   */
  clockOf(i: number): VectorClock {
    const vc: VectorClock = {};
    const { nodes } = this.store;
    for (let n = 0; n < nodes.length; n++) {
      const count = n === this.store.node[i] ? this.store.lanePos[i] + 1 : this.column[n] < 0 ? 0 : this.clocks[i * this.width + this.column[n]];
      if (count > 0) vc[nodes[n]] = count;
    }
    return vc;
  }

  /** Counts an issue; its message is only made for the ones kept. */
  private report(kind: ClockIssueKind, events: number[], message: () => string): void {
    this.issueCount++;
    if (this.issues.length < MAX_ISSUES) this.issues.push({ kind, events, message: message() });
  }

  /**
   * The topological pass: a lane advances as far as its next event's dependencies
   * are done, then waits on the lane that blocks it and is woken when that lane
   * advances, so each event is looked at a few times however many lanes there are.
   * When every unfinished lane waits, the log has a cycle: the earliest blocked
   * event is reported and taken with the dependencies it has.
   */
  private propagate(deps: Dependencies): void {
    const { lanes, lanePos, node } = this.store;
    const next = new Uint32Array(lanes.length);
    const isDone = (d: number): boolean => next[node[d]] > lanePos[d];
    const waiters: number[][] = lanes.map(() => []);
    const queued = new Uint8Array(lanes.length).fill(1);
    const queue = lanes.map((_, n) => n);
    const wake = (n: number): void => {
      for (const w of waiters[n]) {
        if (queued[w] === 0) {
          queued[w] = 1;
          queue.push(w);
        }
      }
      waiters[n] = [];
    };
    let remaining = this.store.size;
    while (remaining > 0) {
      const n = queue.pop();
      if (n === undefined) {
        const stuck = this.breakCycle(deps, next, isDone);
        next[node[stuck]]++;
        remaining--;
        wake(node[stuck]);
        if (queued[node[stuck]] === 0) {
          queued[node[stuck]] = 1;
          queue.push(node[stuck]);
        }
        continue;
      }
      queued[n] = 0;
      const lane = lanes[n];
      const before = next[n];
      while (next[n] < lane.length) {
        const e = lane[next[n]];
        let blocker = -1;
        for (let k = deps.start[e]; k < deps.start[e + 1] && blocker < 0; k++) if (!isDone(deps.list[k])) blocker = deps.list[k];
        if (blocker >= 0) {
          waiters[node[blocker]].push(n);
          break;
        }
        this.take(e, deps);
        next[n]++;
        remaining--;
      }
      if (next[n] > before) wake(n);
    }
  }

  /** Reports the earliest event that waits in a cycle, takes it with what it has, and returns it. */
  private breakCycle(deps: Dependencies, next: Uint32Array, isDone: (d: number) => boolean): number {
    const { lanes } = this.store;
    let stuck = -1;
    for (let n = 0; n < lanes.length; n++) if (next[n] < lanes[n].length && (stuck < 0 || lanes[n][next[n]] < stuck)) stuck = lanes[n][next[n]];
    const waits: number[] = [];
    for (let k = deps.start[stuck]; k < deps.start[stuck + 1]; k++) if (!isDone(deps.list[k])) waits.push(deps.list[k]);
    this.report(
      'cycle',
      [stuck, ...waits],
      () =>
        `happens-before cycle: ${this.store.describe(stuck)} comes after ${waits.map((w) => this.store.describe(w)).join(' and ')}, which in turn (through its node's earlier events) comes after it. Message ids reused for different messages, or clocks copied between nodes, cause this; the edge is ignored.`,
    );
    this.take(stuck, deps, isDone);
    return stuck;
  }

  /** Sets the clock and Lamport time of `e` from its lane predecessor and its dependencies. */
  private take(e: number, deps: Dependencies, include?: (d: number) => boolean): void {
    const { lanes, lanePos, node } = this.store;
    const w = this.width;
    const row = e * w;
    const pos = lanePos[e];
    let lamport = 0;
    if (pos > 0) {
      const prev = lanes[node[e]][pos - 1];
      this.clocks.copyWithin(row, prev * w, prev * w + w);
      lamport = this.lamport[prev];
    }
    for (let k = deps.start[e]; k < deps.start[e + 1]; k++) {
      const d = deps.list[k];
      if (include !== undefined && !include(d)) continue;
      for (let c = 0; c < w; c++) if (this.clocks[d * w + c] > this.clocks[row + c]) this.clocks[row + c] = this.clocks[d * w + c];
      if (this.lamport[d] > lamport) lamport = this.lamport[d];
    }
    const col = this.column[node[e]];
    if (col >= 0) this.clocks[row + col] = pos + 1;
    this.lamport[e] = lamport + 1;
  }
}

/** Why an event depends on an event of another node. */
export const VIA = { message: 0, clock: 1, span: 2 } as const;

/** Cross-lane dependencies per event, as compressed rows: deps of e are list[start[e]..start[e+1]), each with its `VIA`. */
export interface Dependencies {
  start: Uint32Array;
  list: Uint32Array;
  via: Uint8Array;
  /** What the derivation found wrong (cycles, clocks ahead of the log), for `Causality.issues`: the first ones, and how many in all. */
  issues: { kind: ClockIssueKind; events: number[]; message: () => string }[];
  issueCount: number;
}

/** Per lane, the events that carry their own counter: for finding "n2's event with counter 7". */
interface OwnCounters {
  /** Prefix maximum of the own counters along the lane (0 before the first). */
  max: Uint32Array;
  /** Position of the last event with an own counter at or before each position, -1 if none. */
  last: Int32Array;
}

function ownCounters(store: EventStore, n: number): OwnCounters {
  const lane = store.lanes[n];
  const max = new Uint32Array(lane.length);
  const last = new Int32Array(lane.length);
  let running = 0;
  let lastPos = -1;
  for (let p = 0; p < lane.length; p++) {
    const own = ownCounter(store, lane[p]);
    if (own > 0) {
      lastPos = p;
      if (own > running) running = own;
    }
    max[p] = running;
    last[p] = lastPos;
  }
  return { max, last };
}

/** The event's own entry in its own vector clock, 0 when it has none. */
export function ownCounter(store: EventStore, i: number): number {
  if ((store.flags[i] & FLAG_CLOCK) === 0) return 0;
  const self = store.node[i];
  for (let k = store.vcOff[i], end = k + store.vcLen[i]; k < end; k++) if (store.vcKey[k] === self) return store.vcVal[k];
  return 0;
}

function crossLaneDependencies(store: EventStore): Dependencies {
  const issues: Dependencies['issues'] = [];
  let issueCount = 0;
  const report: Report = (kind, events, message) => {
    if (issueCount++ < MAX_ISSUES) issues.push({ kind, events, message });
  };
  const { node, lanes, lanePos } = store;
  const counters: (OwnCounters | undefined)[] = new Array(lanes.length);
  const countersOf = (n: number): OwnCounters => (counters[n] ??= ownCounters(store, n));
  const spanEvent = spanIndex(store);
  const start = new Uint32Array(store.size + 1);
  const list: number[] = [];
  const via: number[] = [];
  /** Per lane, the last clock seen on it: only entries that grew since carry new edges. */
  const previous: (Uint32Array | undefined)[] = new Array(lanes.length);
  const ahead = new Map<number, { first: number; count: number; max: number }>();
  /** Records that e depends on d; same-node dependencies are program order already (or, backwards, a cycle). */
  const add = (e: number, d: number, why: number): void => {
    if (d < 0) return;
    if (node[d] !== node[e]) {
      if (!list.includes(d, start[e])) {
        list.push(d);
        via.push(why);
      }
    } else if (lanePos[d] > lanePos[e]) {
      report('cycle', [e, d], () => `${store.describe(e)} comes before ${store.describe(d)} on the same node, yet depends on it; the edge is ignored`);
    }
  };
  for (let e = 0; e < store.size; e++) {
    start[e] = list.length;
    const self = node[e];
    if (store.kind[e] === RECV) add(e, store.sendOf(e), VIA.message);
    if (store.kind[e] === SPAN && store.parentSpan[e] >= 0) add(e, spanEvent[store.parentSpan[e]], VIA.span);
    if ((store.flags[e] & FLAG_CLOCK) !== 0) {
      const known = (previous[self] ??= new Uint32Array(store.nodes.length));
      for (let k = store.vcOff[e], end = k + store.vcLen[e]; k < end; k++) {
        const n = store.vcKey[k];
        const count = store.vcVal[k];
        if (n === self || count <= known[n]) continue;
        known[n] = count;
        const own = countersOf(n);
        const q = lowerBound(own.max, count + 1);
        if (q === own.max.length && (own.max.length === 0 || own.max[q - 1] < count)) {
          const a = ahead.get(n) ?? { first: e, count: 0, max: own.max.length === 0 ? 0 : own.max[own.max.length - 1] };
          a.count++;
          ahead.set(n, a);
        }
        if (q > 0 && own.last[q - 1] >= 0) add(e, lanes[n][own.last[q - 1]], VIA.clock);
      }
    }
  }
  start[store.size] = list.length;
  for (const [n, a] of ahead) {
    report('clock-ahead-of-log', [a.first], () => `${store.describe(a.first)} has a clock entry for ${store.nodes[n]} beyond its last recorded counter (${a.max})${a.count > 1 ? `, as do ${a.count - 1} later events` : ''}: events of ${store.nodes[n]} are missing from the log, or the clock is wrong`);
  }
  return { start, list: Uint32Array.from(list), via: Uint8Array.from(via), issues, issueCount };
}

/** Per span-id code, the index of the span event with that id (-1 if none). */
function spanIndex(store: EventStore): Int32Array {
  const index = new Int32Array(store.spanIds.length).fill(-1);
  for (let i = 0; i < store.size; i++) if (store.kind[i] === SPAN && store.spanId[i] >= 0 && index[store.spanId[i]] < 0) index[store.spanId[i]] = i;
  return index;
}

/** The rules a logged vector clock must keep (ShiViz's, plus the receive rule). */
function checkClocks(store: EventStore, report: Report): void {
  const entry = new Float64Array(store.nodes.length);
  const lastEvent = new Int32Array(store.nodes.length).fill(-1);
  const lastCount = new Uint32Array(store.nodes.length);
  const fmt = (i: number): string => JSON.stringify(store.clock(i));
  for (let e = 0; e < store.size; e++) {
    if ((store.flags[e] & FLAG_CLOCK) === 0) continue;
    const self = store.node[e];
    const own = ownCounter(store, e);
    if (own === 0) {
      report('missing-own-entry', [e], () => `${store.describe(e)} has clock ${fmt(e)} without an entry for its own node ${store.nodes[self]}; every event must count itself`);
    } else {
      const before = lastEvent[self];
      if (before >= 0 && lastCount[self] >= own) {
        const had = lastCount[self];
        report('own-counter-not-increasing', [before, e], () => `${store.nodes[self]}'s own counter does not grow: ${store.describe(before)} has ${had}, the later ${store.describe(e)} has ${own}`);
      }
      lastEvent[self] = e;
      lastCount[self] = own;
    }
    const send = store.sendOf(e);
    if (send < 0 || (store.flags[send] & FLAG_CLOCK) === 0) continue;
    for (let k = store.vcOff[e], end = k + store.vcLen[e]; k < end; k++) entry[store.vcKey[k]] = store.vcVal[k];
    const behind: string[] = [];
    for (let k = store.vcOff[send], end = k + store.vcLen[send]; k < end; k++) {
      const n = store.vcKey[k];
      if (entry[n] < store.vcVal[k]) behind.push(`${store.nodes[n]} is ${entry[n]} at the receive but ${store.vcVal[k]} at the send`);
    }
    for (let k = store.vcOff[e], end = k + store.vcLen[e]; k < end; k++) entry[store.vcKey[k]] = 0;
    if (behind.length > 0) {
      report('recv-clock-behind-send', [e, send], () => `${store.describe(e)} has clock ${fmt(e)}, which does not cover its send ${store.describe(send)} with ${fmt(send)}: ${behind.join('; ')}. A receive must merge the sender's clock (component-wise maximum) before ticking.`);
    }
  }
}

const dependencyCache = new WeakMap<EventStore, Dependencies>();

/** Who each event depends on across nodes (message, logged clock, parent span), computed once per store. */
export function dependencies(store: EventStore): Dependencies {
  let d = dependencyCache.get(store);
  if (d === undefined) dependencyCache.set(store, (d = crossLaneDependencies(store)));
  return d;
}

const cache = new WeakMap<EventStore, Causality>();

/** The store's happens-before, computed on first use and kept. */
export function causality(store: EventStore): Causality {
  let c = cache.get(store);
  if (c === undefined) cache.set(store, (c = new Causality(store)));
  return c;
}
