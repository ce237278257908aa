import { strict as assert } from 'node:assert';
import { causality } from '../../src/core/events/causality';
import { loadTimeline } from '../../src/core/events/load';
import type { EventRecord } from '../../src/core/events/record';
import { tempDir } from '../support/bugset';
import { at, exchange, ids, withoutClocks, writeJsonl } from '../support/events-fixtures';

describe('events: happens-before', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir('ddbench-hb-')));
  afterEach(() => t.dispose());

  const load = async (records: EventRecord[]) => loadTimeline([writeJsonl(t.dir, 'events.jsonl', records)]);

  /** The answers the fixture's picture gives, whichever way happens-before was derived. */
  async function checkExchange(records: EventRecord[]): Promise<void> {
    const store = await load(records);
    const hb = causality(store);
    const e = (id: string) => at(store, id);
    assert.equal(hb.issueCount, 0, hb.issues.map((i) => i.message).join('\n'));
    assert.ok(hb.happenedBefore(e('e2'), e('f2')));
    assert.ok(hb.happenedBefore(e('e1'), e('g3')), 'transitively through n2');
    assert.ok(hb.happenedBefore(e('g1'), e('e4')));
    assert.ok(!hb.happenedBefore(e('f2'), e('e2')));
    assert.ok(hb.concurrent(e('e3'), e('f2')));
    assert.ok(hb.concurrent(e('e3'), e('g3')));
    assert.ok(hb.concurrent(e('g1'), e('e2')));
    assert.ok(!hb.concurrent(e('e3'), e('e4')), 'same node: program order');
    assert.deepEqual(ids(store, hb.past(e('g2')).indices()), ['e1', 'e2', 'f1', 'f2', 'f3', 'g1']);
    assert.deepEqual(ids(store, hb.future(e('e2')).indices()), ['e3', 'e4', 'f2', 'f3', 'g2', 'g3']);
    assert.deepEqual(ids(store, hb.future(e('e3')).indices()), ['e4']);
    assert.deepEqual(ids(store, hb.past(e('e3')).indices()), ['e1', 'e2']);
    const past = hb.past(e('e4'));
    assert.equal(past.size, 9);
    assert.ok(past.has(e('g1')) && !past.has(e('e4')));
    const bits = past.bitset();
    assert.equal((bits[e('g1') >>> 5] >>> (e('g1') & 31)) & 1, 1);
    const lamport = Object.fromEntries(['e1', 'e2', 'e3', 'e4', 'f1', 'f2', 'f3', 'g1', 'g2', 'g3'].map((id) => [id, hb.lamport[e(id)]]));
    assert.deepEqual(lamport, { e1: 1, e2: 2, e3: 3, e4: 7, f1: 1, f2: 3, f3: 4, g1: 1, g2: 5, g3: 6 });
    assert.deepEqual(hb.clockOf(e('g3')), { n1: 2, n2: 3, n3: 3 });
    assert.deepEqual(hb.clockOf(e('e4')), { n1: 4, n2: 3, n3: 3 });
  }

  it('answers from vector clocks on a 3-node exchange with concurrent events', () => checkExchange(exchange()));

  it('derives the same answers from message ids when the clocks are missing', () => checkExchange(withoutClocks(exchange())));

  it('derives the same answers from clocks alone (no message ids, as in ShiViz logs)', () =>
    checkExchange(exchange().map(({ msgId: _m, ...rest }) => rest)));

  it('links sends and receives as message partners, duplicates included', async () => {
    const records = exchange();
    records.push({ id: 'f2b', ts: 31, node: 'n2', kind: 'recv', msg: 'Append', msgId: 'm1', peer: 'n1', vc: { n1: 2, n2: 3 } });
    const store = await load(records);
    const e = (id: string) => at(store, id);
    assert.deepEqual(ids(store, store.partners(e('e2'))), ['f2', 'f2b']);
    assert.deepEqual(ids(store, store.partners(e('f2b'))), ['e2']);
    assert.deepEqual(store.partners(e('e1')), []);
  });

  it('orders events without clocks (harness, router) only by their own node, and mixed logs still agree', async () => {
    const records = exchange();
    records.push({ id: 'h1', ts: 25, node: 'harness', kind: 'fault', msg: 'partition' });
    records.push({ id: 'p1', ts: 33, node: 'n1', kind: 'proc', msg: 'n1 paused' });
    const store = await load(records);
    const hb = causality(store);
    const e = (id: string) => at(store, id);
    assert.equal(hb.issueCount, 0);
    assert.ok(hb.concurrent(e('h1'), e('e2')));
    assert.ok(hb.happenedBefore(e('e2'), e('p1')) && hb.happenedBefore(e('p1'), e('e3')));
    assert.ok(hb.concurrent(e('p1'), e('f2')), 'p1 comes after e2 but the send carries nothing of it');
  });

  it('reports a receive whose clock does not cover its send, naming both events and lines', async () => {
    const records = exchange();
    records[4] = { ...records[4], vc: { n2: 2 } };
    const store = await load(records);
    const hb = causality(store);
    const issue = hb.issues.find((i) => i.kind === 'recv-clock-behind-send');
    assert.ok(issue, JSON.stringify(hb.issues));
    assert.match(issue.message, /n2 recv "Append" \(events\.jsonl:5\)/);
    assert.match(issue.message, /its send n1 send "Append" \(events\.jsonl:4\)/);
    assert.match(issue.message, /n1 is 0 at the receive but 2 at the send/);
    assert.deepEqual(ids(store, issue.events), ['e2', 'f2']);
    assert.ok(hb.happenedBefore(at(store, 'e2'), at(store, 'f2')), 'the message id still links them');
  });

  it('reports a clock without its own entry, and an own counter that does not grow', async () => {
    const records = exchange();
    records[1] = { ...records[1], vc: { n9: 1 } };
    records[5] = { ...records[5], vc: { n1: 2 } };
    const hb = causality(await load(records));
    const kinds = hb.issues.map((i) => i.kind);
    assert.ok(kinds.includes('missing-own-entry'), kinds.join());
    const stuck = hb.issues.find((i) => i.kind === 'own-counter-not-increasing');
    assert.match(stuck?.message ?? '', /n1's own counter does not grow: n1 send "Append" \(events\.jsonl:4\) has 2, the later n1 log "slow disk" \(events\.jsonl:6\) has 2/);
  });

  it('reports a clock that refers to events the log does not have', async () => {
    const records = exchange().filter((r) => r.id !== 'f3' && r.id !== 'f1');
    const hb = causality(await load(records));
    const ahead = hb.issues.find((i) => i.kind === 'clock-ahead-of-log');
    assert.match(ahead?.message ?? '', /entry for n2 beyond its last recorded counter \(2\), as do 1 later events/);
  });

  it('reports a happens-before cycle from a reused message id instead of hanging', async () => {
    const records = withoutClocks(exchange());
    // n1 "receives" m2 before it sent m1: n2 forwards m2 only after receiving m1.
    records.push({ id: 'x', ts: 12, node: 'n1', kind: 'recv', msg: 'Forward', msgId: 'm2', peer: 'n2' });
    const store = await load(records);
    const hb = causality(store);
    const cycle = hb.issues.find((i) => i.kind === 'cycle');
    assert.ok(cycle, JSON.stringify(hb.issues));
    assert.match(cycle.message, /happens-before cycle/);
    assert.ok(cycle.events.length >= 2);
    assert.equal(hb.lamport.every((l) => l > 0), true, 'every event still got a time');
  });

  it('follows a token around a ring of many nodes (no clocks), with every later hop after every earlier one', async () => {
    const nodes = Array.from({ length: 150 }, (_, k) => `n${k}`);
    const records: EventRecord[] = [];
    let ts = 0;
    for (let hop = 0; hop < 3 * nodes.length; hop++) {
      const from = nodes[hop % nodes.length];
      const to = nodes[(hop + 1) % nodes.length];
      // Each receive is written before its send (as a collector may); time order puts them right.
      records.push({ id: `r${hop}`, ts: ts + 1, node: to, kind: 'recv', msg: 'token', msgId: `t${hop}`, peer: from });
      records.push({ id: `s${hop}`, ts: ts, node: from, kind: 'send', msg: 'token', msgId: `t${hop}`, peer: to });
      ts += 2;
    }
    const store = await load(records);
    const hb = causality(store);
    assert.equal(hb.issueCount, 0);
    const last = at(store, `r${3 * nodes.length - 1}`);
    assert.equal(hb.past(last).size, records.length - 1);
    assert.ok(hb.happenedBefore(at(store, 's0'), last));
    assert.equal(hb.lamport[last], records.length);
  });

  it('takes span parent → child across nodes as happens-before', async () => {
    const store = await load([
      { id: 'a', ts: 1, node: 'api', kind: 'span', msg: 'GET /x', span: { traceId: 't1', spanId: 's1', name: 'GET /x', end: 50 } },
      { id: 'b', ts: 5, node: 'db', kind: 'span', msg: 'query', span: { traceId: 't1', spanId: 's2', parentId: 's1', name: 'query', end: 20 } },
      { id: 'c', ts: 2, node: 'db', kind: 'log', msg: 'idle' },
    ]);
    const hb = causality(store);
    assert.ok(hb.happenedBefore(at(store, 'a'), at(store, 'b')));
    assert.ok(hb.concurrent(at(store, 'a'), at(store, 'c')));
  });
});
