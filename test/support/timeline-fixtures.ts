import type { Event } from '../../src/core/events/event';
import { storeOf } from '../../src/core/timeline/live';
import type { RunSource } from '../../src/core/timeline/model';

type Step = Omit<Event, 'id'>;

/**
 * A small run with one of everything the timeline draws (times in µs):
 *
 *   m1 n1 → n2 delivered; m2 n1 → n3 dropped by the router; m3 client-a → n1 delayed;
 *   partition {n1} | {n2, n3} 200–300; n2 paused 400–450; n3 killed 500–600;
 *   link fault on client-a 650–800; a failed check at 900; a log with a source line.
 */
export function faultyRun(): Event[] {
  const steps: Step[] = [
    { ts: 0, node: 'harness', kind: 'proc', level: 'info', msg: 'router listening' },
    { ts: 10, node: 'n1', kind: 'proc', level: 'info', msg: 'start' },
    { ts: 20, node: 'n2', kind: 'proc', level: 'info', msg: 'start' },
    { ts: 30, node: 'n3', kind: 'proc', level: 'info', msg: 'start' },
    { ts: 100, node: 'n1', kind: 'send', msg: 'Append', msgId: 'm1', peer: 'n2', vc: { n1: 1 } },
    { ts: 110, node: 'n2', kind: 'recv', msg: 'Append', msgId: 'm1', peer: 'n1', vc: { n1: 1, n2: 1 } },
    { ts: 120, node: 'n1', kind: 'send', msg: 'Append', msgId: 'm2', peer: 'n3', vc: { n1: 2 } },
    { ts: 125, node: 'router', kind: 'fault', level: 'warn', msg: 'drop', msgId: 'm2', peer: 'n3', fields: { from: 'n1', to: 'n3', type: 'Append' } },
    { ts: 200, node: 'harness', kind: 'fault', level: 'warn', msg: 'partition', fields: { groups: [['n1'], ['n2', 'n3']] } },
    { ts: 300, node: 'harness', kind: 'fault', level: 'warn', msg: 'heal', fields: {} },
    { ts: 400, node: 'n2', kind: 'proc', level: 'info', msg: 'pause' },
    { ts: 450, node: 'n2', kind: 'proc', level: 'info', msg: 'resume' },
    { ts: 500, node: 'n3', kind: 'proc', level: 'info', msg: 'kill' },
    { ts: 505, node: 'n3', kind: 'proc', level: 'info', msg: 'exit', fields: { code: null, signal: 'SIGKILL' } },
    { ts: 600, node: 'n3', kind: 'proc', level: 'info', msg: 'restart' },
    { ts: 650, node: 'harness', kind: 'fault', level: 'warn', msg: 'link fault', fields: { from: 'client-a', to: '*', type: 'Put', drop: 1 } },
    { ts: 700, node: 'client-a', kind: 'send', msg: 'Put', msgId: 'm3', peer: 'n1', vc: { 'client-a': 1 } },
    { ts: 705, node: 'router', kind: 'fault', level: 'info', msg: 'delay', msgId: 'm3', peer: 'n1', fields: { from: 'client-a', to: 'n1', type: 'Put' } },
    { ts: 760, node: 'n1', kind: 'recv', msg: 'Put', msgId: 'm3', peer: 'client-a', vc: { n1: 3, 'client-a': 1 } },
    { ts: 800, node: 'harness', kind: 'fault', level: 'warn', msg: 'clear link faults', fields: {} },
    { ts: 900, node: 'harness', kind: 'check', level: 'error', msg: 'mutual exclusion', fields: { ok: false } },
    { ts: 950, node: 'n1', kind: 'log', level: 'info', msg: 'granted lock', vc: { n1: 4, 'client-a': 1 }, src: { file: 'src/server.js', line: 37 } },
    { ts: 1000, node: 'harness', kind: 'proc', level: 'info', msg: 'cluster stopped' },
  ];
  return steps.map((s, k) => ({ id: `e${k + 1}`, ...s }));
}

export function runOf(events: Event[], label = 'test run'): RunSource {
  return { store: storeOf(events, '/runs/r1/events.jsonl'), label, inputs: ['/runs/r1/events.jsonl'] };
}

/**
 * `count` events over `nodes` lanes, every second one half of a message (send, then
 * its receive on the next node), for level-of-detail and scale tests.
 */
export function busyRun(count: number, nodes = 4): Event[] {
  const out: Event[] = [];
  for (let k = 0; out.length < count; k++) {
    const from = `n${(k % nodes) + 1}`;
    const to = `n${((k + 1) % nodes) + 1}`;
    const ts = k * 10;
    out.push({ id: `s${k}`, ts, node: from, kind: 'send', msg: 'Ping', msgId: `m${k}`, peer: to });
    out.push({ id: `r${k}`, ts: ts + 7, node: to, kind: 'recv', msg: 'Ping', msgId: `m${k}`, peer: from });
    if (k % 10 === 0) out.push({ id: `l${k}`, ts: ts + 3, node: from, kind: 'log', level: k % 100 === 0 ? 'warn' : 'info', msg: `step ${k}` });
  }
  return out.slice(0, count).sort((a, b) => a.ts - b.ts);
}
