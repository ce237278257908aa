import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { lowerBound, permute, sortOrder } from '../../src/core/events/columns';
import { forEachJsonValue, forEachLine } from '../../src/core/events/lines';
import { loadTimeline } from '../../src/core/events/load';
import { FLAG_CLOCK, FLAG_SYNTHETIC_TIME } from '../../src/core/events/store';
import { tempDir, writeFiles } from '../support/bugset';
import { allEvents, exchange, writeJsonl } from '../support/events-fixtures';

describe('events: store and streaming building blocks', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir('ddbench-store-')));
  afterEach(() => t.dispose());
  const file = (name: string, text: string): string => {
    writeFiles(t.dir, { [name]: text });
    return path.join(t.dir, name);
  };

  it('sorts stably by time with a merge of sorted runs', () => {
    assert.equal(sortOrder(Float64Array.from([1, 2, 2, 5])), undefined);
    const keys = Float64Array.from([5, 1, 3, 1, 2, 5, 0]);
    const order = sortOrder(keys)!;
    assert.deepEqual([...order], [6, 1, 3, 4, 2, 0, 5]);
    assert.deepEqual([...permute(keys, order)], [0, 1, 1, 2, 3, 5, 5]);
    assert.equal(lowerBound(Float64Array.from([1, 3, 3, 7]), 3), 1);
    assert.equal(lowerBound(Float64Array.from([1, 3, 3, 7]), 8), 4);
  });

  it('keeps columns in time order with lanes in program order, interned strings and origins', async () => {
    const f = writeJsonl(t.dir, 'events.jsonl', exchange());
    const store = await loadTimeline([f]);
    assert.deepEqual(store.nodes, ['n3', 'n1', 'n2']);
    assert.deepEqual([...store.lanes[store.nodeCode('n1')]].map((i) => store.event(i).id), ['e1', 'e2', 'e3', 'e4']);
    const e3 = store.findById('e3');
    assert.equal(store.lanePos[e3], 2);
    assert.equal(store.text(e3), 'slow disk');
    assert.equal(store.levelName(e3), 'warn');
    assert.equal(store.kindName(e3), 'log');
    assert.deepEqual(store.origin(e3), { file: f, line: 6 });
    assert.deepEqual(store.clock(e3), { n1: 3 });
    assert.equal(store.flags[e3] & FLAG_CLOCK, FLAG_CLOCK);
    assert.equal(store.describe(e3), 'n1 log "slow disk" (events.jsonl:6)');
    assert.deepEqual(allEvents(store).map((e) => e.id), ['g1', 'e1', 'f1', 'e2', 'f2', 'e3', 'f3', 'g2', 'g3', 'e4']);
    assert.deepEqual(store.indexRange(30, 50), [4, 7]);
  });

  it('marks events of sources without times, and labels same-named files apart', async () => {
    const a = file('a/events.jsonl', `${JSON.stringify({ ts: 1, node: 'n1', kind: 'log' })}\n`);
    const b = file('b/events.jsonl', `${JSON.stringify({ ts: 2, node: 'n1', kind: 'log' })}\n`);
    const log = file('s.log', 'hello\nn1 {"n1":1}\n');
    const store = await loadTimeline([a, b, log]);
    assert.deepEqual(store.sources.map((s) => s.label), ['events.jsonl', 'events.jsonl#2', 's.log']);
    assert.deepEqual(allEvents(store).map((e) => e.id), ['events.jsonl:1', 's.log:1', 'events.jsonl#2:1'], 'ties keep input order');
    assert.equal(store.flags[1] & FLAG_SYNTHETIC_TIME, FLAG_SYNTHETIC_TIME, 'the ShiViz event is at its position (1)');
    assert.equal(store.flags[0] & FLAG_SYNTHETIC_TIME, 0);
  });

  it('decodes every event of a file spanning several read chunks, read back from the file', async () => {
    const records = Array.from({ length: 25_000 }, (_, k) => ({ ts: k, node: `n${k % 3}`, kind: 'log', msg: `event ${k} ✓`, fields: { k } }));
    const store = await loadTimeline([writeJsonl(t.dir, 'big.jsonl', records)]);
    assert.equal(store.size, records.length);
    assert.ok(fs.statSync(store.sources[0].file).size > 1.5 * 2 ** 20, 'more than one read chunk');
    for (let i = 0; i < store.size; i++) {
      const e = store.event(i);
      assert.equal(e.msg, `event ${i} ✓`);
      assert.deepEqual(e.fields, { k: i });
    }
  });

  it('streams lines with their byte ranges, CRLF and BOM removed', async () => {
    const f = file('x.txt', '\uFEFFfirst\r\nsecond\n\nlast');
    const seen: [string, number, string][] = [];
    await forEachLine(f, (line, n, bytes, start, end) => seen.push([line, n, bytes.toString('utf8', start, end)]));
    assert.deepEqual(seen, [
      ['first', 1, 'first'],
      ['second', 2, 'second'],
      ['', 3, ''],
      ['last', 4, 'last'],
    ]);
  });

  it('streams JSON values: pretty-printed ones, array elements, and reports stray text', async () => {
    const values: [string, number][] = [];
    const strays: [string, number][] = [];
    const on = (text: string, line: number) => values.push([JSON.stringify(JSON.parse(text)), line]);
    const stray = (text: string, line: number) => strays.push([text, line]);
    await forEachJsonValue(file('v.json', '{"a": "}{"}\n{\n  "b": [1, {"c": 2}]\n}\nnot json\n[3]'), 'values', on, stray);
    assert.deepEqual(values, [
      ['{"a":"}{"}', 1],
      ['{"b":[1,{"c":2}]}', 2],
      ['[3]', 6],
    ]);
    assert.deepEqual(strays, [['not json', 5]]);
    values.length = 0;
    await forEachJsonValue(file('c.json', '{"traceEvents":[{"ph":"i"},\n{"ph":"X","args":{"x":[1]}}],"meta":{"k":[2]}}'), 'array-elements', on, stray);
    assert.deepEqual(values, [
      ['{"ph":"i"}', 1],
      ['{"ph":"X","args":{"x":[1]}}', 2],
    ]);
  });

  it('reads foreign Chrome traces: slices (X, B/E, async), instants, counters and flows, a lane per thread', async () => {
    const f = file(
      'foreign.json',
      JSON.stringify([
        { ph: 'M', name: 'process_name', pid: 7, args: { name: 'browser' } },
        { ph: 'X', name: 'Layout', cat: 'blink', ts: 100, dur: 50, pid: 7, tid: 9, args: { nodes: 3 } },
        { ph: 'i', name: 'mark', ts: 120, pid: 8, tid: 8 },
        { ph: 'B', name: 'open', ts: 130, pid: 7, tid: 9 },
        { ph: 's', id: 1, cat: 'ipc', name: 'IPC', ts: 130, pid: 7, tid: 9 },
        { ph: 'E', ts: 140, pid: 7, tid: 9, args: { ok: true } },
        { ph: 'b', id: 'r', cat: 'net', name: 'request', ts: 135, pid: 8, tid: 8 },
        { ph: 'e', id: 'r', cat: 'net', name: 'request', ts: 190, pid: 8, tid: 8 },
        { ph: 'C', name: 'heap', ts: 150, pid: 8, tid: 8, args: { used: 12 } },
        { ph: 'f', id: 1, cat: 'ipc', name: 'IPC', ts: 160, pid: 8, tid: 8 },
        { ph: 'X', name: 'Paint', ts: 170, dur: 5, pid: 7, tid: 10 },
        { ph: 'M', name: 'thread_name', pid: 7, tid: 10, args: { name: 'compositor' } },
        { ph: 'P', name: 'sample', ts: 180, pid: 8, tid: 8 },
        { ph: 'E', ts: 200, pid: 8, tid: 8 },
      ]),
    );
    const store = await loadTimeline([f]);
    const events = allEvents(store);
    assert.deepEqual(events[0], {
      id: 'foreign.json:1',
      ts: 100,
      node: 'browser/tid 9',
      kind: 'span',
      msg: 'Layout',
      span: { traceId: 'chrome', spanId: '7.9.100', name: 'Layout', end: 150 },
      fields: { nodes: 3, cat: 'blink', tid: 9 },
    });
    const byMsg = (msg: string) => events.find((e) => e.msg === msg);
    assert.equal(byMsg('mark')?.node, 'pid 8', 'a process with one thread is one lane');
    assert.equal(byMsg('Paint')?.node, 'browser/compositor', 'threads are lanes, named by thread_name metadata read after them');
    assert.deepEqual(byMsg('open')?.span?.end, 140, 'B/E make a span');
    assert.deepEqual(byMsg('open')?.fields, { tid: 9, ok: true });
    assert.deepEqual(byMsg('request')?.span?.end, 190, 'async b/e make a span');
    assert.equal(byMsg('heap used=12')?.kind, 'log');
    const send = events.find((e) => e.kind === 'send');
    const recv = events.find((e) => e.kind === 'recv');
    assert.ok(send !== undefined && recv !== undefined && send.msgId === recv.msgId, 'a flow s → f is a message');
    assert.deepEqual([send.node, recv.node], ['browser/tid 9', 'pid 8']);
    const notes = store.sources[0].notes.join('\n');
    assert.match(notes, /1 end event\(s\) \(E, e, F\) without a begin were skipped/);
    assert.match(notes, /skipped trace events of phases the timeline does not show: P ×1/);
  });
});
