import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ByteInterner, Interner } from '../../src/core/events/columns';
import { forEachLineBytes } from '../../src/core/events/lines';
import { loadTimeline } from '../../src/core/events/load';
import { toEvent, type EventRecord } from '../../src/core/events/record';
import type { EventStore } from '../../src/core/events/store';
import { tempDir } from '../support/bugset';

/** A file of many read chunks (3 MiB and more): scanned lines, general-path lines, bad and blank lines, CRLF, a BOM and a line longer than a chunk. */
function mixedLines(): string[] {
  const lines: string[] = [];
  for (let k = 0; k < 12_000; k++) {
    const node = `n${k % 4}`;
    if (k % 997 === 5) lines.push(`{"ts":${k},"node":"${node}","kind":"log"`); // cut short: a bad line
    else if (k % 991 === 7) lines.push('');
    else if (k % 983 === 3) lines.push(`{"ts":${k},"node":"${node}","kind":"log","msg":"esc\\u00e9ape ✓","vc":{"${node}":${k}.0}}\r`); // general path
    else if (k === 6000) lines.push(JSON.stringify({ ts: k, node, kind: 'log', msg: 'y'.repeat(1_500_000) }));
    else lines.push(JSON.stringify({ id: String(k), ts: k, node, kind: k % 3 === 0 ? 'send' : 'log', msg: `event ${k} ✓`, msgId: `${node}:${k}`, vc: { [node]: k }, fields: { k, body: { entries: [{ key: `k${k % 7}` }] } } }));
  }
  return lines;
}

/** Every event's text and decoded event as the store gives them, in `order`. */
function readAll(store: EventStore, order: number[]): Map<number, { raw: string; event: unknown }> {
  const out = new Map<number, { raw: string; event: unknown }>();
  for (const i of order) out.set(i, { raw: store.rawText(i), event: store.event(i) });
  return out;
}

describe('events: lines read back from the file on demand', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir('ddbench-filetext-')));
  afterEach(() => t.dispose());

  it('gives every event exactly its line of the file, in any order of access', async () => {
    const lines = mixedLines();
    const file = path.join(t.dir, 'events.jsonl');
    fs.writeFileSync(file, `\uFEFF${lines.join('\n')}\n`);
    assert.ok(fs.statSync(file).size > 3 * 2 ** 20, 'several read chunks');
    const store = await loadTimeline([file]);
    const bad = lines.flatMap((l, k) => (l !== '' && !l.endsWith('}') && !l.endsWith('}\r') ? [k + 1] : []));
    assert.deepEqual(
      store.bad.map((b) => b.line),
      bad,
    );
    assert.equal(store.size, lines.length - bad.length - lines.filter((l) => l === '').length);
    const expected = (i: number): { raw: string; event: unknown } => {
      const { line } = store.origin(i);
      const raw = lines[line - 1].replace(/\r$/, '');
      return { raw, event: toEvent(JSON.parse(raw) as EventRecord, `events.jsonl:${line}`) };
    };
    const forwards = Array.from({ length: store.size }, (_, i) => i);
    const backwards = [...forwards].reverse();
    // A stride that jumps between distant parts, so cached parts are evicted and read again.
    const jumping = forwards.map((i) => (i * 7919) % store.size);
    for (const order of [forwards, backwards, jumping]) {
      const got = readAll(store, order);
      for (const i of forwards) assert.deepEqual(got.get(i), expected(i), `event ${i}`);
    }
  });

  it('still reads its lines after the file grew, and after it was removed', async () => {
    const file = path.join(t.dir, 'events.jsonl');
    const records = Array.from({ length: 20_000 }, (_, k) => JSON.stringify({ ts: k, node: `n${k % 3}`, kind: 'log', msg: `m${k}` }));
    fs.writeFileSync(file, `${records.join('\n')}\n`);
    const store = await loadTimeline([file]);
    fs.appendFileSync(file, `${JSON.stringify({ ts: 1e9, node: 'n9', kind: 'log', msg: 'later' })}\n`);
    fs.utimesSync(file, new Date(), new Date(Date.now() + 5000));
    for (let i = 0; i < store.size; i++) assert.equal(store.rawText(i), records[i]);
    if (process.platform !== 'win32') {
      const other = await loadTimeline([file]);
      fs.rmSync(file);
      for (let i = 0; i < store.size; i++) assert.equal(other.event(i).msg, `m${i}`);
    }
  });

  it('refuses to give a line of a file rewritten since the load, rather than another event', async () => {
    const file = path.join(t.dir, 'events.jsonl');
    const write = (msg: string): void => fs.writeFileSync(file, `${Array.from({ length: 5000 }, (_, k) => JSON.stringify({ ts: k, node: 'n1', kind: 'log', msg: `${msg}${k % 10}` })).join('\n')}\n`);
    write('before');
    const store = await loadTimeline([file]);
    // The same size, so only the content and the modification time tell.
    write('after!');
    fs.utimesSync(file, new Date(), new Date(Date.now() + 5000));
    assert.throws(() => store.event(0), /changed since it was loaded/);
    assert.throws(() => store.rawText(store.size - 1), /changed since it was loaded/);
    fs.truncateSync(file, 100);
    assert.throws(() => store.event(store.size - 1), /changed since it was loaded/);
  });

  it('streams lines through one reused buffer, telling where each chunk is in the file', async () => {
    const file = path.join(t.dir, 'lines.txt');
    const lines = Array.from({ length: 30_000 }, (_, k) => `line ${k} ${'é'.repeat(k % 90)}`);
    lines[12_345] = 'z'.repeat(2_500_000);
    const bytes = Buffer.from(`${lines.join('\r\n')}`);
    fs.writeFileSync(file, bytes);
    let chunkAt = -1;
    let chunkBytes = Buffer.alloc(0);
    const seen: string[] = [];
    await forEachLineBytes(
      file,
      (buf, start, end, lineNo) => {
        assert.equal(lineNo, seen.length + 1);
        assert.ok(buf.subarray(start, end).equals(chunkBytes.subarray(start, end)), 'the line is in the chunk announced before it');
        const text = buf.toString('utf8', start, end);
        assert.equal(bytes.toString('utf8', chunkAt + start, chunkAt + end), text, 'the chunk is where it says in the file');
        seen.push(text);
      },
      (buf, position, length) => {
        assert.ok(buf.subarray(0, length).equals(bytes.subarray(position, position + length)));
        chunkAt = position;
        chunkBytes = Buffer.from(buf.subarray(0, length));
      },
    );
    assert.deepEqual(seen, lines);
  });

  it('interns a value met as bytes and as a string under one code, whichever comes first', () => {
    const strings = new Interner();
    const bytes = new ByteInterner(strings);
    const b = (s: string): Buffer => Buffer.from(`"${s}"`);
    const byBytes = (s: string): number => bytes.code(b(s), 1, b(s).length - 1, /^[\x00-\x7f]*$/.test(s));
    const names = Array.from({ length: 40 }, (_, k) => `m:${k}`);
    const first = names.map(byBytes);
    assert.deepEqual(first, names.map((_, k) => k));
    assert.deepEqual(names.map((s) => strings.code(s)), first, 'strings find the values met as bytes');
    assert.equal(strings.find('m:39'), 39);
    assert.equal(strings.code('by string'), 40);
    assert.equal(byBytes('by string'), 40, 'bytes find a value a string added');
    assert.equal(byBytes('ñ'), 41);
    assert.equal(bytes.code(Buffer.from([0xff]), 0, 1, false), 42);
    assert.equal(bytes.code(Buffer.from([0xfe]), 0, 1, false), 42, 'invalid bytes that decode alike share a code');
    assert.equal(strings.code('\ufffd'), 42);
    assert.deepEqual(strings.values.slice(40), ['by string', 'ñ', '\ufffd']);
  });
});
