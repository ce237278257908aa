import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { loadTimeline } from '../../src/core/events/load';
import { isEventRecord, whyNotEventRecord, type EventRecord } from '../../src/core/events/record';
import { EventLineScanner, type ByteRange } from '../../src/core/events/scan';
import { kindCode, levelCode } from '../../src/core/events/store';
import { tempDir, writeFiles } from '../support/bugset';

/** What the store keeps of a line, as the scanner read it. */
function scanned(s: EventLineScanner, b: Buffer): unknown {
  const text = (r: ByteRange): string | undefined => (r.start < 0 ? undefined : b.toString('utf8', r.start, r.end));
  const vc: [string, number][] = [];
  for (let k = 0; k < s.clockSize; k++) vc.push([b.toString('utf8', s.clockKeyStart[k], s.clockKeyEnd[k]), s.clockValue[k]]);
  return {
    ts: s.ts,
    node: text(s.node),
    kind: s.kind,
    level: s.level,
    msg: text(s.msg),
    msgId: text(s.msgId),
    peer: text(s.peer),
    vc: s.hasClock ? vc : undefined,
    span: s.span === undefined ? undefined : { ...s.span },
    traceId: s.span?.traceId ?? s.fieldsTraceId,
  };
}

/** The same, as JSON.parse and the record check give it (the general path). */
function parsed(r: EventRecord): unknown {
  const traceId = r.span?.traceId ?? r.fields?.traceId;
  return {
    ts: r.ts,
    node: r.node,
    kind: kindCode(r.kind),
    level: levelCode(r.level),
    msg: r.msg,
    msgId: r.msgId,
    peer: r.peer,
    vc: r.vc === undefined ? undefined : Object.entries(r.vc),
    span: r.span === undefined ? undefined : { traceId: r.span.traceId, spanId: r.span.spanId, parentId: r.span.parentId, end: r.span.end },
    traceId: typeof traceId === 'string' ? traceId : undefined,
  };
}

/** The general path's verdict on a line: the record, or the reason it is bad. */
function general(line: string): { record: EventRecord } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { error: `not JSON (${(err as Error).message}); expected one event object per line` };
  }
  return isEventRecord(value) ? { record: value } : { error: whyNotEventRecord(value) };
}

/** Checks that the scanner accepts `line` only when the general path does, with the same values. */
function agree(scanner: EventLineScanner, line: string): boolean {
  const bytes = Buffer.from(`garbage before${line}\nand after`);
  const start = Buffer.byteLength('garbage before');
  const accepted = scanner.scan(bytes, start, start + Buffer.byteLength(line));
  if (!accepted) return false;
  const verdict = general(line);
  assert.ok('record' in verdict, `the scanner accepted a line the general path rejects: ${line}`);
  assert.deepEqual(scanned(scanner, bytes), parsed(verdict.record), line);
  return true;
}

const COMMON = [
  '{"id":"1","ts":25,"node":"n4","kind":"log","level":"debug","msg":"heartbeat timeout","vc":{"n4":1},"src":{"file":"src/raft.mjs","line":446},"fields":{"term":3,"index":0,"commit":-5}}',
  '{"id":"3","ts":45,"node":"n4","kind":"send","msg":"AppendEntries","msgId":"n4:1","peer":"n2","vc":{"n4":3,"n1":2},"fields":{"body":{"term":3,"entries":[{"key":"k2","value":"v\\"2\\u00e9"}],"ok":true,"no":false,"x":null,"f":-1.5e-3}}}',
  '{"ts":1.5,"node":"ñode","kind":"recv","msg":"añadido ✓","msgId":"m:1","peer":"n1","vc":{"ñode":4294967295,"n1":0}}',
  ' { "ts" : -0 , "node" : "n1" , "kind" : "span" , "span" : { "traceId" : "ABC", "spanId" : "s1", "parentId": "s0", "name" : "op", "end" : 12, "extra": [] } } ',
  '{"ts":3,"node":"n1","kind":"check","fields":{"traceId":"T9","nested":{"traceId":7}},"unknown":{"a":[1,2,{"b":"c"}]}}',
  '{"ts":12345678901234567890,"node":"n1","kind":"state","fields":{"traceId":5}}',
  '{"ts":1e3,"node":"n1","kind":"fault","level":"error","vc":{}}',
];

const SUBTLE = [
  '{"ts":1,"node":"n1","kind":"log","vc":{"n1":1.0}}', // an integer JSON.parse reads, the scanner does not
  '{"ts":1,"node":"n1","kind":"log","vc":{"n1":1,"n1":2}}', // duplicate key: last value, first place
  '{"ts":1,"node":"n1","kind":"log","vc":{"n2":1,"10":2}}', // index-like keys enumerate first
  '{"ts":1,"node":"n1","kind":"log","vc":{"n1":4294967296}}',
  '{"ts":1,"node":"n1","kind":"log","vc":{"n1":-1}}',
  '{"ts":1,"node":"n1","kind":"log","vc":{"n1":-0}}',
  '{"ts":01,"node":"n1","kind":"log"}',
  '{"ts":1.,"node":"n1","kind":"log"}',
  '{"ts":.5,"node":"n1","kind":"log"}',
  '{"ts":+1,"node":"n1","kind":"log"}',
  '{"ts":1,"node":"n1","kind":"log",}',
  '{"ts":1,"node":"n1","kind":"log"} x',
  '{"ts":1,"node":"n1","kind":"log"}\u00a0',
  '{"ts":1,"node":"n\\u0031","kind":"log"}',
  '{"ts":1,"n\\u006fde":"n1","kind":"log"}',
  '{"ts":1,"node":"n1","node":"n2","kind":"log"}',
  '{"ts":1,"node":"n1","kind":"log","level":"fatal"}',
  '{"ts":1,"node":"n1","kind":"Log"}',
  '{"ts":"1","node":"n1","kind":"log"}',
  '{"ts":1,"node":"n1","kind":"log","msg":null}',
  '{"ts":1,"node":"n1","kind":"log","msg":"tab\there"}',
  '{"ts":1,"node":"n1","kind":"log","fields":{"s":"bad \\x escape"}}',
  '{"ts":1,"node":"n1","kind":"log","fields":{"s":"\\u12"}}',
  '{"ts":1,"node":"n1","kind":"log","fields":[]}',
  '{"ts":1,"node":"n1","kind":"log","fields":{"traceId":"a","traceId":"b"}}',
  '{"ts":1,"node":"n1","kind":"log","fields":{"trace\\u0049d":"a"}}',
  '{"ts":1,"node":"n1","kind":"log","fields":{"a":[1,2,]}}',
  '{"ts":1,"node":"n1","kind":"log","fields":{"a":tru}}',
  '{"ts":1,"node":"n1","kind":"log","src":{"file":"a.js","line":0}}',
  '{"ts":1,"node":"n1","kind":"log","src":{"file":"a.js","line":2.0}}',
  '{"ts":1,"node":"n1","kind":"log","src":{"file":"a.js"}}',
  '{"ts":1,"node":"n1","kind":"span","span":{"traceId":"t","spanId":"s"}}',
  '{"ts":1,"node":"n1","kind":"span","span":{"traceId":"t","spanId":"s","name":"x","end":"2"}}',
  '{"ts":1,"node":"n1"}',
  '{"ts":1,"node":"n1","kind":"log"',
  '[{"ts":1,"node":"n1","kind":"log"}]',
  '{}',
  '',
];

describe('events: the byte scanner of event lines', () => {
  it('reads the usual lines exactly as JSON.parse and the record check do', () => {
    const scanner = new EventLineScanner();
    for (const line of COMMON) assert.ok(agree(scanner, line), `the scanner should read: ${line}`);
  });

  it('leaves every subtle line to the general path (or reads it identically)', () => {
    const scanner = new EventLineScanner();
    for (const line of SUBTLE) agree(scanner, line);
    for (const line of SUBTLE.slice(0, 7)) assert.equal(scanner.scan(Buffer.from(line), 0, Buffer.byteLength(line)), false, line);
  });

  it('never accepts a mangled line that the general path would read differently', () => {
    // Mutations of the usual lines: bytes dropped, JSON punctuation inserted, ranges repeated.
    let seed = 12345;
    const random = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const inserts = ['"', '\\', ',', ':', '{', '}', '[', ']', ' ', '0', '-', '.', 'e', '\u0001', 'é', 'n', '"n1":1,'];
    const scanner = new EventLineScanner();
    let accepted = 0;
    for (let round = 0; round < 20_000; round++) {
      let line = COMMON[random(COMMON.length)];
      for (let m = 0, count = 1 + random(3); m < count; m++) {
        const at = random(line.length + 1);
        const action = random(3);
        if (action === 0) line = line.slice(0, at) + line.slice(at + 1 + random(3));
        else if (action === 1) line = line.slice(0, at) + inserts[random(inserts.length)] + line.slice(at);
        else line = line.slice(0, at) + line.slice(random(line.length), random(line.length)) + line.slice(at);
      }
      if (agree(scanner, line)) accepted++;
    }
    assert.ok(accepted > 100, `some mangled lines are still events the scanner reads (${accepted})`);
  });

  it('loads a file of fast and general lines with the same events and the same bad-line reports', async () => {
    const t = tempDir('ddbench-scan-');
    try {
      const lines = [...COMMON, ...SUBTLE];
      writeFiles(t.dir, { 'events.jsonl': `${lines.join('\n')}\n` });
      const store = await loadTimeline([path.join(t.dir, 'events.jsonl')]);
      const expected = lines.map((line, k) => ({ line: k + 1, verdict: general(line) })).filter(({ verdict }, k) => !('error' in verdict && lines[k].trim() === ''));
      const bad = expected.filter((e) => 'error' in e.verdict).map((e) => ({ line: e.line, error: (e.verdict as { error: string }).error }));
      assert.deepEqual(
        store.bad.map(({ line, error }) => ({ line, error })),
        bad,
      );
      assert.equal(store.badCount, bad.length);
      const good = expected.filter((e) => 'record' in e.verdict);
      assert.equal(store.size, good.length);
      const byLine = new Map(good.map((e) => [e.line, (e.verdict as { record: EventRecord }).record]));
      for (let i = 0; i < store.size; i++) {
        const record = byLine.get(store.origin(i).line)!;
        // The counter columns are unsigned integers, so a -0 counter comes back as 0.
        assert.deepEqual(store.clock(i), record.vc === undefined ? undefined : Object.fromEntries(Object.entries(record.vc).map(([k, v]) => [k, v + 0])));
        assert.equal(store.nodeName(i), record.node);
        assert.equal(store.text(i), record.msg);
        assert.equal(store.ts[i], record.ts);
      }
    } finally {
      t.dispose();
    }
  });
});
