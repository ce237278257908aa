import * as assert from 'node:assert/strict';
import type { Event } from '../../src/core/events/event';
import { ARROW, type Filter, type HostReply, type HostRequest, type Replies } from '../../src/core/timeline/protocol';
import { kindCode } from '../../src/core/events/store';
import { packStore, unpackStore } from '../../src/core/timeline/embed';
import { RequestError, TimelineModel } from '../../src/core/timeline/model';
import { LiveRun } from '../../src/core/timeline/live';
import { aggregateWindow, eventRanks, laneTrees, MAX_ARROWS } from '../../src/core/timeline/window';
import { causalAxis, timeAxis } from '../../src/core/timeline/axis';
import { intervals } from '../../src/core/timeline/intervals';
import { messageArrows, spans, violations } from '../../src/core/timeline/overlays';
import { busyRun, faultyRun, runOf } from '../support/timeline-fixtures';

const ALL: Filter = { hiddenLanes: [] };

/** Sends a request and checks the answer is the matching kind. */
function ask<T extends keyof Replies>(model: TimelineModel, req: Omit<Extract<HostRequest, { type: T }>, 'reqId'> & { type: T }): Replies[T] {
  const reply: HostReply = model.handle({ ...req, reqId: 7 } as unknown as HostRequest);
  assert.equal(reply.reqId, 7);
  return reply as Replies[T];
}

function indexOf(model: TimelineModel, id: string): number {
  const meta = model.meta();
  for (let i = 0; i < meta.runs[0].events; i++) if (model.eventAt({ run: 0, index: i }).event.id === id) return i;
  throw new Error(`no event ${id}`);
}

describe('timeline chatter', () => {
  /** Heartbeats every 100 µs from n1 to n2 and n3, and a few requests at odd times. */
  function gossipy(): Event[] {
    const out: Event[] = [];
    for (let k = 0; k < 200; k++) {
      for (const to of ['n2', 'n3']) {
        out.push({ id: `h${k}${to}`, ts: k * 100, node: 'n1', kind: 'send', msg: 'Heartbeat', msgId: `h${k}${to}`, peer: to });
        out.push({ id: `hr${k}${to}`, ts: k * 100 + 5, node: to, kind: 'recv', msg: 'Heartbeat', msgId: `h${k}${to}`, peer: 'n1' });
      }
    }
    for (const [k, ts] of [1234, 5077, 13001].entries()) {
      out.push({ id: `p${k}`, ts, node: 'n2', kind: 'send', msg: 'Put', msgId: `p${k}`, peer: 'n1' });
      out.push({ id: `pr${k}`, ts: ts + 40, node: 'n1', kind: 'recv', msg: 'Put', msgId: `p${k}`, peer: 'n2' });
    }
    return out.sort((a, b) => a.ts - b.ts);
  }
  const model = new TimelineModel([runOf(gossipy())], { title: 'gossip' });

  it('finds the steady, repeating message types and leaves the rest', () => {
    assert.deepEqual(model.meta().runs[0].chatterTypes, ['Heartbeat']);
  });

  it('draws chatter as a density band in a wide view, as arrows once zoomed in or when asked', () => {
    const wide = ask(model, { type: 'window', axis: 'time', width: 200, filter: ALL });
    assert.equal(wide.arrows.send.length, 3, 'only the Puts are arrows');
    assert.equal(wide.chatter.hidden, 400);
    assert.equal(wide.chatter.count.reduce((n, c) => n + c, 0), 400, 'every hidden heartbeat counted on its sender row');
    const zoomed = ask(model, { type: 'window', axis: 'time', range: [0, 2000], width: 200, filter: ALL });
    assert.equal(zoomed.chatter.hidden, 0);
    assert.equal(zoomed.arrows.send.length, 43, '21 rounds of two heartbeats (0 to 2000 µs) and one Put: few enough to tell apart');
    const shown = ask(model, { type: 'window', axis: 'time', width: 200, filter: { hiddenLanes: [], hideChatter: false } });
    assert.equal(shown.chatter.hidden, 0);
    assert.equal(shown.arrows.send.length, 403);
  });
});

describe('timeline model', () => {
  const model = new TimelineModel([runOf(faultyRun())], { title: 'fixture' });

  it('orders lanes harness, nodes, clients, router and counts what the run shows', () => {
    const run = model.meta().runs[0];
    assert.deepEqual(
      run.lanes.map((l) => [l.name, l.role]),
      [
        ['harness', 'harness'],
        ['n1', 'node'],
        ['n2', 'node'],
        ['n3', 'node'],
        ['client-a', 'client'],
        ['router', 'router'],
      ],
    );
    assert.equal(run.events, faultyRun().length);
    assert.equal(run.messages, 3, 'm1, m3 delivered and m2 dropped');
    assert.equal(run.dropped, 1);
    assert.equal(run.faultBands, 4);
    assert.deepEqual(
      run.violations.map((v) => [v.node, v.text, v.ts]),
      [['harness', 'mutual exclusion', 900]],
    );
  });

  it('shades fault periods from their start to their end event, on the lanes they affect', () => {
    const w = ask(model, { type: 'window', axis: 'time', width: 100, filter: ALL });
    const bands = w.overlays.bands.map((b) => [b.kind, b.nodes.join(','), b.x0, b.x1]);
    assert.deepEqual(bands, [
      ['partition', 'n1,n2,n3', 200, 300],
      ['paused', 'n2', 400, 450],
      ['down', 'n3', 500, 600],
      ['link', 'client-a', 650, 800],
    ]);
    assert.match(w.overlays.bands[0].label, /\{n1\} \| \{n2, n3\}/);
    assert.match(w.overlays.bands[3].label, /client-a→\* Put: drop 100%/);
  });

  it('draws message arrows send → receive, and send → the router for a dropped message', () => {
    const w = ask(model, { type: 'window', axis: 'time', width: 200, filter: ALL });
    const rowOf = (node: string): number => w.rows.findIndex((r) => r.node === node);
    const arrows = Array.from(w.arrows.send, (_, k) => ({ from: w.rows[w.arrows.row0[k]].node, to: w.rows[w.arrows.row1[k]].node, x0: w.arrows.x0[k], x1: w.arrows.x1[k], flags: w.arrows.flags[k] }));
    arrows.sort((a, b) => a.x0 - b.x0);
    assert.deepEqual(arrows, [
      { from: 'n1', to: 'n2', x0: 100, x1: 110, flags: 0 },
      { from: 'n1', to: 'n3', x0: 120, x1: 125, flags: ARROW.dropped },
      { from: 'client-a', to: 'n1', x0: 700, x1: 760, flags: ARROW.delayed },
    ]);
    assert.equal(w.arrows.total, 3);
    assert.ok(rowOf('router') >= 0);
  });

  it('aggregates each row into per-pixel buckets with counts, worst level and a representative', () => {
    const w = ask(model, { type: 'window', axis: 'time', range: [0, 1000], width: 10, filter: ALL });
    assert.equal(w.total, faultyRun().length);
    const sum = w.count.reduce((a, b) => a + b, 0);
    assert.equal(sum, w.total);
    const harness = w.rows.findIndex((r) => r.node === 'harness');
    // The failed check (900 µs) falls into bucket 9 of the harness and raises its alarm.
    assert.equal(w.alarm[harness * 10 + 9], 1);
    assert.equal(w.maxLevel[harness * 10 + 9], 4);
    assert.equal(model.eventAt({ run: 0, index: w.top[harness * 10 + 9] }).event.msg, 'mutual exclusion');
  });

  it('filters by kind, level and text, and hides lanes', () => {
    const onlyFaults = ask(model, { type: 'window', axis: 'time', width: 50, filter: { hiddenLanes: [], kinds: ['fault'] } });
    assert.equal(onlyFaults.total, 6, 'four harness faults, the drop and the delay');
    assert.equal(onlyFaults.arrows.send.length, 0, 'no send passes, so no arrow');
    const warnings = ask(model, { type: 'window', axis: 'time', width: 50, filter: { hiddenLanes: [], minLevel: 'warn' } });
    assert.equal(warnings.total, 6, 'the warn faults (not the info delay) and the error check');
    const text = ask(model, { type: 'window', axis: 'time', width: 50, filter: { hiddenLanes: [], text: 'APPEND' } });
    assert.equal(text.total, 4, 'case-insensitive, messages and fields');
    const regex = ask(model, { type: 'window', axis: 'time', width: 50, filter: { hiddenLanes: [], text: '^(pause|resume)$', regex: true } });
    assert.equal(regex.total, 2);
    const hidden = ask(model, { type: 'window', axis: 'time', width: 50, filter: { hiddenLanes: ['router', 'harness'] } });
    assert.deepEqual(
      hidden.rows.map((r) => r.node),
      ['n1', 'n2', 'n3', 'client-a'],
    );
    assert.equal(hidden.arrows.send.length, 3, 'arrows between shown lanes stay (the drop ends on n3, not on the router)');
    assert.throws(() => model.handle({ type: 'window', reqId: 1, axis: 'time', width: 50, filter: { hiddenLanes: [], text: '(', regex: true } }), RequestError);
    assert.throws(() => model.handle({ type: 'window', reqId: 1, axis: 'time', width: 50, filter: { hiddenLanes: [], text: 'a(?=b)', regex: true } }), /uses lookahead/);
    const catastrophic = ask(model, { type: 'window', axis: 'time', width: 50, filter: { hiddenLanes: [], text: '(.+)+$Q', regex: true } });
    assert.equal(catastrophic.total, 0, 'a catastrophic pattern returns');
  });

  it('in causal order every message arrow points forward and each lane keeps its order', () => {
    const w = ask(model, { type: 'window', axis: 'causal', width: 300, filter: ALL });
    for (let k = 0; k < w.arrows.send.length; k++) {
      if (w.arrows.flags[k] & ARROW.dropped) assert.ok(w.arrows.x1[k] >= w.arrows.x0[k]);
      else assert.ok(w.arrows.x1[k] > w.arrows.x0[k], `arrow ${k} goes back in causal order`);
    }
    // Lanes without causal edges (the harness) follow the others' Lamport time, in their own order.
    const violation = w.overlays.violations[0];
    const bands = w.overlays.bands;
    assert.ok(bands.every((b) => b.x1 >= b.x0));
    assert.ok(violation.x >= bands[bands.length - 1].x0);
    assert.ok(w.extent[1] >= violation.x);
  });

  it('answers details with partners, router steps, both clocks and the causal counts', () => {
    const recv = indexOf(model, 'e19');
    const d = ask(model, { type: 'details', ref: { run: 0, index: recv } });
    assert.equal(d.event.msg, 'Put');
    assert.deepEqual(
      d.partners.map((p) => [p.node, p.kind]),
      [['client-a', 'send']],
    );
    assert.deepEqual(
      d.routerFaults.map((f) => f.action),
      ['delay'],
    );
    assert.deepEqual(d.derivedClock, { n1: 4, 'client-a': 1 }, 'n1: start, two sends, this receive; client-a: its send');
    assert.equal(d.pastSize, 4);
    assert.ok(d.futureSize >= 1);
    const drop = indexOf(model, 'e8');
    assert.deepEqual(
      ask(model, { type: 'details', ref: { run: 0, index: drop } }).partners.map((p) => p.node),
      ['n1'],
    );
  });

  it('gives the causal past and future as lane prefixes and suffixes', () => {
    const recv = indexOf(model, 'e6');
    const c = ask(model, { type: 'causal', ref: { run: 0, index: recv }, axis: 'time' });
    const n1 = c.lanes.find((l) => l.node === 'n1');
    assert.deepEqual(n1 && [n1.pastTo, n1.past], [100, 2], 'n1 up to the send of m1 (its start and the send)');
    const n2 = c.lanes.find((l) => l.node === 'n2');
    assert.deepEqual(n2 && [n2.pastTo, n2.futureFrom], [20, 400]);
    assert.equal(c.lanes.find((l) => l.node === 'harness')?.past, 0);
  });

  it('searches forward and back from a position, wrapping, and counts the matches', () => {
    const first = ask(model, { type: 'search', axis: 'time', filter: ALL, query: 'append', regex: false, fields: true, from: 0, dir: 1 });
    assert.deepEqual([first.position, first.total, first.match?.x], [1, 4, 100]);
    const second = ask(model, { type: 'search', axis: 'time', filter: ALL, query: 'append', regex: false, fields: true, from: 0, after: first.match?.ref, dir: 1 });
    assert.equal(second.match?.x, 110);
    const wrapped = ask(model, { type: 'search', axis: 'time', filter: ALL, query: 'append', regex: false, fields: true, from: 0, after: first.match?.ref, dir: -1 });
    assert.equal(wrapped.position, 4);
    const textOnly = ask(model, { type: 'search', axis: 'time', filter: ALL, query: 'append', regex: false, fields: false, from: 0, dir: 1 });
    assert.equal(textOnly.total, 3, "by default a search reads the events' text, not their fields");
    const bad = ask(model, { type: 'search', axis: 'time', filter: ALL, query: '[', regex: true, fields: false, from: 0, dir: 1 });
    assert.match(bad.error ?? '', /regular expression/);
  });

  it('steps along a lane, skipping filtered events', () => {
    const start = indexOf(model, 'e2');
    const next = ask(model, { type: 'step', ref: { run: 0, index: start }, dir: 1, filter: { hiddenLanes: [], kinds: ['recv', 'log'] } });
    assert.equal(next.match && model.eventAt(next.match.ref).event.id, 'e19');
    const none = ask(model, { type: 'step', ref: { run: 0, index: start }, dir: -1, filter: ALL });
    assert.equal(none.match, null);
  });

  it('names the first divergence of two runs, lane by lane', () => {
    const passing = faultyRun().filter((e) => e.kind !== 'check');
    passing.push({ id: 'ok', ts: 900, node: 'harness', kind: 'check', level: 'info', msg: 'trial passed', fields: { ok: true } });
    const moved = passing.map((e) => (e.id === 'e22' ? { ...e, msg: 'lock refused' } : e)).sort((a, b) => a.ts - b.ts);
    const both = new TimelineModel([runOf(faultyRun(), 'fail'), runOf(moved, 'pass')], { title: 'compare' });
    const d = both.meta().divergence;
    assert.ok(d);
    assert.deepEqual(
      d.lanes.map((l) => l.node).sort(),
      ['harness', 'n1'],
    );
    assert.equal(d.first?.node, 'harness', 'the check at 900 µs comes before the log at 950 µs');
    const w = ask(both, { type: 'window', axis: 'time', width: 100, filter: ALL });
    assert.deepEqual(
      w.rows.slice(0, 4).map((r) => `${r.node}/${r.run}`),
      ['harness/0', 'harness/1', 'n1/0', 'n1/1'],
    );
    assert.equal(w.overlays.divergence.filter((m) => m.first).length, 2);
  });

  it('samples arrows beyond what can be told apart, keeping the flagged ones', () => {
    const big = new TimelineModel([runOf(busyRun(20_000))], { title: 'busy' });
    // Its steady pings are chatter: shown as arrows here, to be sampled.
    const arrowsAll: Filter = { hiddenLanes: [], hideChatter: false };
    const w = ask(big, { type: 'window', axis: 'time', width: 800, filter: arrowsAll });
    assert.ok(w.arrows.total > MAX_ARROWS);
    assert.ok(w.arrows.send.length <= MAX_ARROWS);
    assert.equal(w.total, 20_000);
    const zoomed = ask(big, { type: 'window', axis: 'time', range: [0, 200], width: 800, filter: arrowsAll });
    assert.equal(zoomed.arrows.send.length, zoomed.arrows.total, 'a narrow window gets every arrow');
    assert.ok(zoomed.labels.text.length > 0, 'sparse rows get labels');
  });

  it('packs a store for the HTML page and unpacks the very same events, faults and checks before the texts come', () => {
    const { store } = runOf(faultyRun());
    const packed = packStore(store);
    const { store: copy, loadText } = unpackStore(packed.columns);
    const early = new Set([kindCode('fault'), kindCode('check')]);
    for (let i = 0; i < store.size; i++) {
      if (early.has(store.kind[i])) assert.deepEqual(copy.event(i), store.event(i));
      else assert.throws(() => copy.event(i), /still loading/);
    }
    assert.ok(store.kind.some((k) => early.has(k)) && store.kind.some((k) => !early.has(k)), 'the run has events of both sorts');
    const meta = (s: typeof store) => new TimelineModel([{ store: s, label: 'run', inputs: [] }], { title: 't' }).meta().runs[0];
    const before = meta(copy);
    assert.ok(before.faultBands > 0, 'the fixture has fault periods');
    assert.deepEqual(before, meta(store), 'the model builds the same from the columns and the early texts');
    loadText(packed.text);
    assert.equal(copy.size, store.size);
    for (let i = 0; i < store.size; i++) {
      assert.deepEqual(copy.event(i), store.event(i));
      assert.deepEqual(copy.origin(i), store.origin(i));
      assert.deepEqual(copy.clock(i), store.clock(i));
    }
    assert.deepEqual(copy.nodes, store.nodes);
  });

  it('packs every column of a store exactly, whichever way each is stored (constant, narrowed, as differences, floats transposed)', () => {
    const { store } = runOf([...busyRun(3000, 5), ...faultyRun()]);
    const { store: copy } = unpackStore(packStore(store).columns);
    for (const name of ['ts', 'dur', 'node', 'kind', 'level', 'flags', 'msg', 'msgId', 'peer', 'trace', 'spanId', 'parentSpan', 'vcOff', 'vcLen', 'vcKey', 'vcVal'] as const) {
      assert.equal(copy[name].constructor, store[name].constructor, name);
      assert.deepEqual(Array.from(copy[name]), Array.from(store[name]), name);
    }
    for (let i = 0; i < store.size; i++) assert.deepEqual(copy.origin(i), store.origin(i));
  });
});

describe('timeline live run', () => {
  it('rebuilds from the cluster\'s events after new ones arrive, and stops listening when disposed', async () => {
    const events = faultyRun().slice(0, 5);
    const listeners = new Set<(e: Event) => void>();
    const cluster = {
      runDir: '/runs/live',
      events: () => events,
      onEvent: (l: (e: Event) => void) => {
        listeners.add(l);
        return () => void listeners.delete(l);
      },
    };
    const seen: number[] = [];
    const live = new LiveRun(cluster, 'live', (run) => seen.push(run.store.size));
    assert.equal(live.current().store.size, 5);
    events.push(...faultyRun().slice(5, 9));
    for (const l of listeners) l(events[5]);
    for (const l of listeners) l(events[6]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.deepEqual(seen, [9], 'one rebuild for a burst of events');
    live.dispose();
    assert.equal(listeners.size, 0);
  });
});

describe('timeline window from the lane trees', () => {
  it('gives the same buckets as scanning every event, on both axes', () => {
    const { store } = runOf([...busyRun(3000, 5), ...faultyRun()]);
    const rank = eventRanks(store, violations(store).map((v) => v.index));
    const none = intervals(new Float64Array(0), new Float64Array(0));
    for (const axis of [timeAxis(store), causalAxis(store)]) {
      const base = {
        run: 0,
        store,
        axis,
        rank,
        arrows: messageArrows(store),
        plainArrows: none,
        flaggedArrows: none,
        chatterArrows: none,
        hideChatter: true,
        spans: spans(store),
        spanIntervals: none,
        rowOfNode: Int32Array.from(store.nodes, (_, n) => (n === 1 ? -1 : n)),
      };
      const trees = laneTrees(store, axis, rank);
      const [lo, hi] = axis.extent;
      for (const [from, to, width] of [[lo, hi, 37], [lo + (hi - lo) * 0.3, lo + (hi - lo) * 0.6, 11], [lo, hi, 1]]) {
        const viaTrees = aggregateWindow([{ ...base, mask: undefined, lanes: () => trees }], store.nodes.length, from, to, width, true);
        // A mask that keeps everything takes the scan.
        const viaScan = aggregateWindow([{ ...base, mask: new Uint8Array(store.size).fill(1), lanes: () => assert.fail('the scan needs no trees') }], store.nodes.length, from, to, width, true);
        assert.ok(viaScan.total > 16 * width, 'enough events per pixel for the trees');
        for (const key of ['count', 'maxLevel', 'kinds', 'top', 'alarm'] as const) assert.deepEqual(viaTrees[key], viaScan[key], `${axis.name} ${key}`);
        assert.equal(viaTrees.total, viaScan.total);
      }
    }
  });
});
