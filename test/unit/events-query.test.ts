import { strict as assert } from 'node:assert';
import { loadTimeline } from '../../src/core/events/load';
import { compilePattern } from '../../src/core/events/pattern';
import { aggregate, queryEvents } from '../../src/core/events/query';
import { kindCode, levelCode, type EventStore } from '../../src/core/events/store';
import { tempDir } from '../support/bugset';
import { at, exchange, ids, writeJsonl } from '../support/events-fixtures';

describe('events: queries and aggregation', () => {
  let t: ReturnType<typeof tempDir>;
  let store: EventStore;
  before(async () => {
    t = tempDir('ddbench-query-');
    const records = exchange();
    records.push({ id: 's1', ts: 45, node: 'n2', kind: 'span', msg: 'apply', span: { traceId: 'ABC', spanId: 'x1', name: 'apply', end: 65 } });
    records.push({ id: 'l1', ts: 46, node: 'n3', kind: 'log', msg: 'in trace', fields: { traceId: 'abc', user: 'Zoë' } });
    store = await loadTimeline([writeJsonl(t.dir, 'events.jsonl', records)]);
  });
  after(() => t.dispose());

  const q = (query: Parameters<typeof queryEvents>[1]) => ids(store, queryEvents(store, query));

  it('returns indices in time order', () => {
    const all = queryEvents(store, {});
    assert.equal(all.length, store.size);
    for (let k = 1; k < all.length; k++) assert.ok(store.ts[all[k]] >= store.ts[all[k - 1]]);
  });

  it('filters by node, kind, level and time window', () => {
    assert.deepEqual(q({ nodes: ['n1'] }), ['e1', 'e2', 'e3', 'e4']);
    assert.deepEqual(q({ nodes: ['n1', 'nobody'], kinds: ['send', 'recv'] }), ['e2', 'e4']);
    assert.deepEqual(q({ levels: ['warn'] }), ['e3']);
    assert.deepEqual(q({ minLevel: 'warn' }), ['e3', 'e4']);
    assert.deepEqual(q({ from: 30, to: 50 }), ['e3', 'f2', 'f3', 'l1', 's1']);
    assert.deepEqual(q({ from: 30, to: 50, kinds: ['log'], limit: 1 }), ['e3']);
  });

  it('finds text in messages and in fields, by substring or regex', () => {
    assert.deepEqual(q({ text: 'SLOW' }), ['e3']);
    assert.deepEqual(q({ text: compilePattern('^n\\d starts$') }), ['e1', 'f1', 'g1']);
    assert.deepEqual(q({ text: '"index":7' }), ['e2', 'f2']);
    assert.deepEqual(q({ text: 'zoë' }), ['l1']);
    assert.deepEqual(q({ text: compilePattern('(.+)+$Q') }), [], 'a catastrophic pattern returns');
    assert.deepEqual(q({ text: compilePattern('term', 'g'), nodes: ['n1'] }), ['e1']);
  });

  it('finds the events of a message and of a trace', () => {
    assert.deepEqual(q({ msgId: 'm2' }), ['f3', 'g2']);
    assert.deepEqual(q({ msgId: 'unknown' }), []);
    assert.deepEqual(q({ traceId: 'abc' }), ['l1', 's1']);
  });

  it('aggregates a window per lane and pixel: counts, worst level, kinds and the most important event', () => {
    const b = aggregate(store, { from: 0, to: 80, width: 4 });
    assert.equal(b.bucketUs, 20);
    assert.equal(b.total, store.size);
    assert.deepEqual(
      b.lanes.map((l) => l.node),
      ['n3', 'n1', 'n2'],
    );
    const n1 = b.lanes.find((l) => l.node === 'n1')!;
    assert.deepEqual([...n1.count], [1, 2, 0, 1]);
    assert.deepEqual([...n1.maxLevel], [levelCode('info'), levelCode('warn'), 0, levelCode('error')]);
    assert.deepEqual([...n1.top].map((i) => (i < 0 ? null : store.event(i).id)), ['e1', 'e3', null, 'e4']);
    assert.equal(n1.kinds[1], (1 << kindCode('send')) | (1 << kindCode('log')));
    const n2 = b.lanes.find((l) => l.node === 'n2')!;
    assert.equal(store.event(n2.top[2]).id, 'f3', 'a message outranks a span when neither has a level');
  });

  it('aggregates only what passes a filter, and a window much wider than the data', () => {
    const b = aggregate(store, { from: -1000, to: 1000, width: 1, filter: { kinds: ['recv'] } });
    assert.equal(b.total, 3);
    assert.deepEqual(b.lanes.map((l) => [l.node, l.count[0], store.event(l.top[0]).id]).sort(), [
      ['n1', 1, 'e4'],
      ['n2', 1, 'f2'],
      ['n3', 1, 'g2'],
    ]);
    assert.throws(() => aggregate(store, { from: 5, to: 5, width: 10 }), /empty time window/);
  });

  it('finds an event by id', () => {
    assert.equal(store.event(at(store, 'g2')).msgId, 'm2');
    assert.equal(store.findById('nope'), -1);
  });
});
