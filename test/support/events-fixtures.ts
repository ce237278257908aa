import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EventRecord } from '../../src/core/events/record';
import type { EventStore } from '../../src/core/events/store';

/**
 * A three-node exchange with known happens-before (ids name the events):
 *
 *   n1: e1 log ─ e2 send m1 ─────────────────────── e3 log ── e4 recv m3
 *   n2:   f1 log ── f2 recv m1 ─ f3 send m2                       ▲
 *   n3: g1 log ──────────────────── g2 recv m2 ── g3 send m3 ─────┘
 *
 * e3 is concurrent with f2, f3, g1, g2 and g3; g1 with everything before g2.
 */
export function exchange(): EventRecord[] {
  return [
    { id: 'g1', ts: 5, node: 'n3', kind: 'log', level: 'info', msg: 'n3 starts', vc: { n3: 1 } },
    { id: 'e1', ts: 10, node: 'n1', kind: 'log', level: 'info', msg: 'n1 starts', vc: { n1: 1 }, fields: { term: 1 } },
    { id: 'f1', ts: 15, node: 'n2', kind: 'log', level: 'debug', msg: 'n2 starts', vc: { n2: 1 } },
    { id: 'e2', ts: 20, node: 'n1', kind: 'send', msg: 'Append', msgId: 'm1', peer: 'n2', vc: { n1: 2 }, fields: { body: { index: 7 } } },
    { id: 'f2', ts: 30, node: 'n2', kind: 'recv', msg: 'Append', msgId: 'm1', peer: 'n1', vc: { n1: 2, n2: 2 }, fields: { body: { index: 7 } } },
    { id: 'e3', ts: 35, node: 'n1', kind: 'log', level: 'warn', msg: 'slow disk', vc: { n1: 3 }, src: { file: 'src/wal.mjs', line: 42 } },
    { id: 'f3', ts: 40, node: 'n2', kind: 'send', msg: 'Forward', msgId: 'm2', peer: 'n3', vc: { n1: 2, n2: 3 } },
    { id: 'g2', ts: 50, node: 'n3', kind: 'recv', msg: 'Forward', msgId: 'm2', peer: 'n2', vc: { n1: 2, n2: 3, n3: 2 } },
    { id: 'g3', ts: 60, node: 'n3', kind: 'send', msg: 'Done', msgId: 'm3', peer: 'n1', vc: { n1: 2, n2: 3, n3: 3 } },
    { id: 'e4', ts: 70, node: 'n1', kind: 'recv', msg: 'Done', msgId: 'm3', peer: 'n3', vc: { n1: 4, n2: 3, n3: 3 }, level: 'error' },
  ];
}

/** The same records without vector clocks: happens-before must come from message ids. */
export function withoutClocks(records: EventRecord[]): EventRecord[] {
  return records.map(({ vc: _vc, ...rest }) => rest);
}

export function jsonl(records: readonly object[]): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

export function writeJsonl(dir: string, name: string, records: readonly object[]): string {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, jsonl(records));
  return file;
}

/** Store index of the event with this id. */
export function at(store: EventStore, id: string): number {
  const i = store.findById(id);
  if (i < 0) throw new Error(`no event ${id}`);
  return i;
}

/** Ids of the given store indices, sorted. */
export function ids(store: EventStore, indices: Iterable<number>): string[] {
  return [...indices].map((i) => store.event(i).id).sort();
}

/** Every event of a store, decoded. */
export function allEvents(store: EventStore): ReturnType<EventStore['event']>[] {
  return Array.from({ length: store.size }, (_, i) => store.event(i));
}
