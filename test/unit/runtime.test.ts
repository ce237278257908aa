import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BufferedDisk } from '../../src/runtime/disk';
import { FsStore } from '../../src/runtime/fs-store';
import { parseHostEnv } from '../../src/runtime/host-env';
import { createNodeRuntime, type RuntimeHost } from '../../src/runtime/node-runtime';
import { seededRandom } from '../../src/runtime/random';
import type { RuntimeEvent } from '../../src/runtime/runtime-event';
import { errorLocation } from '../../src/runtime/source-location';
import { VectorClockTracker } from '../../src/runtime/vclock';
import { decodeFrame, FromRouterFrame, ToRouterFrame, type MsgFrame } from '../../src/runtime/wire';
import { ensureLiveHost, liveHostPath } from '../fixtures/live-host-build';
import { logFromFixture } from '../fixtures/log-caller';

const fixtures = path.resolve(__dirname, '..', 'fixtures');

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-runtime-'));
}

describe('runtime: vector clocks', () => {
  it('ticks on local events and merges on receive', () => {
    const a = new VectorClockTracker('a');
    const b = new VectorClockTracker('b');
    assert.deepEqual(a.tick(), { a: 1 });
    const sent = a.tick();
    b.tick();
    assert.deepEqual(b.receive(sent), { a: 2, b: 2 });
    assert.deepEqual(b.receive({ a: 1, c: 5 }), { a: 2, b: 3, c: 5 });
    assert.deepEqual(a.snapshot(), { a: 2 });
  });

  it('resumes a restarted node where its previous process stopped counting', () => {
    assert.deepEqual(new VectorClockTracker('a', 41).tick(), { a: 42 });
  });
});

describe('runtime: seeded PRNG', () => {
  it('repeats for the same seed and stream, and differs otherwise', () => {
    const draw = (r: () => number) => Array.from({ length: 50 }, r);
    assert.deepEqual(draw(seededRandom(1, 'node', 'n1')), draw(seededRandom(1, 'node', 'n1')));
    assert.notDeepEqual(draw(seededRandom(1, 'node', 'n1')), draw(seededRandom(1, 'node', 'n2')));
    assert.notDeepEqual(draw(seededRandom(1, 'node', 'n1')), draw(seededRandom(2, 'node', 'n1')));
    // Stream parts are separated, so ('ab','c') and ('a','bc') are different streams.
    assert.notDeepEqual(draw(seededRandom(1, 'ab', 'c')), draw(seededRandom(1, 'a', 'bc')));
  });

  it('draws in [0, 1) with a plausible spread', () => {
    const values = Array.from({ length: 10_000 }, seededRandom(3, 'spread'));
    assert.ok(values.every((v) => v >= 0 && v < 1));
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    assert.ok(Math.abs(mean - 0.5) < 0.02, `mean ${mean}`);
    const buckets = new Array<number>(10).fill(0);
    for (const v of values) buckets[Math.floor(v * 10)]! += 1;
    assert.ok(buckets.every((n) => n > 850 && n < 1150), `buckets ${buckets.join(',')}`);
  });
});

describe('runtime: buffered disk', () => {
  let dir: string;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps writes in memory until sync, while reads see them', () => {
    const disk = new BufferedDisk(new FsStore(dir));
    disk.write('term', '3');
    disk.append('log/wal', 'a\n');
    assert.equal(disk.read('term'), '3');
    assert.equal(disk.read('log/wal'), 'a\n');
    assert.deepEqual(disk.list(), ['log/wal', 'term']);
    assert.ok(!fs.existsSync(path.join(dir, 'term')), 'nothing reaches the folder before sync');
    disk.sync();
    assert.equal(fs.readFileSync(path.join(dir, 'term'), 'utf8'), '3');
    assert.equal(fs.readFileSync(path.join(dir, 'log', 'wal'), 'utf8'), 'a\n');
  });

  it('appends to synced content, and a fresh disk sees only what was synced', () => {
    const disk = new BufferedDisk(new FsStore(dir));
    disk.append('wal', '1\n');
    disk.sync();
    disk.append('wal', '2\n');
    disk.append('wal', '3\n');
    assert.equal(disk.read('wal'), '1\n2\n3\n');
    assert.equal(fs.readFileSync(path.join(dir, 'wal'), 'utf8'), '1\n');
    // What a process restarted now would see: the unsynced appends are gone.
    assert.equal(new BufferedDisk(new FsStore(dir)).read('wal'), '1\n');
    disk.sync();
    assert.equal(new BufferedDisk(new FsStore(dir)).read('wal'), '1\n2\n3\n');
  });

  it('removes, rewrites after remove, and lists without temp files', () => {
    const disk = new BufferedDisk(new FsStore(dir));
    disk.write('a', 'x');
    disk.write('b', 'y');
    disk.sync();
    disk.remove('a');
    assert.equal(disk.read('a'), undefined);
    assert.deepEqual(disk.list(), ['b']);
    assert.ok(fs.existsSync(path.join(dir, 'a')));
    disk.remove('b');
    disk.append('b', 'new');
    assert.equal(disk.read('b'), 'new');
    disk.sync();
    assert.deepEqual(fs.readdirSync(dir).sort(), ['b']);
    assert.equal(fs.readFileSync(path.join(dir, 'b'), 'utf8'), 'new');
  });

  it('rejects names that would leave the data folder', () => {
    const disk = new BufferedDisk(new FsStore(dir));
    for (const bad of ['../x', '/etc/passwd', 'a/../../b', '', 'a//b', 'a\\b']) {
      assert.throws(() => disk.write(bad, 'x'), /invalid file name/, bad);
    }
  });
});

/** A host that records what the runtime does, for testing the runtime without processes. */
function fakeHost(dir: string): RuntimeHost & { events: RuntimeEvent[]; sent: MsgFrame[] } {
  const events: RuntimeEvent[] = [];
  const sent: MsgFrame[] = [];
  return {
    events,
    sent,
    wallClockMs: () => 1_000_000,
    eventTime: () => events.length,
    setTimer: () => ({ cancel: () => undefined }),
    transmit: (frame) => sent.push(frame),
    emit: (e) => events.push(e),
    store: new FsStore(dir),
  };
}

describe('runtime: node runtime', () => {
  let dir: string;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const make = (host: RuntimeHost, incarnation = 0, vcStart = 0) =>
    createNodeRuntime({ id: 'n1', nodes: ['n1', 'n2'], config: { k: 1 }, seed: 9, srcRoot: fixtures, incarnation, vcStart, host });

  it('stamps sends and receives with vector clocks and shared message ids', () => {
    const host = fakeHost(dir);
    const { rt, deliver } = make(host);
    const got: string[] = [];
    rt.onMessage((m) => got.push(`${m.type} ${m.from} ${m.msgId}`));
    rt.send('n2', 'ping', { x: 1 });
    assert.deepEqual(host.sent, [{ t: 'msg', msgId: 'n1:1', from: 'n1', to: 'n2', type: 'ping', body: { x: 1 }, vc: { n1: 1 } }]);
    deliver({ t: 'msg', msgId: 'n2:7', from: 'n2', to: 'n1', type: 'pong', body: null, vc: { n1: 1, n2: 4 } });
    assert.deepEqual(got, ['pong n2 n2:7']);
    assert.deepEqual(
      host.events.map((e) => [e.kind, e.msg, e.msgId, e.peer, e.vc]),
      [
        ['send', 'ping', 'n1:1', 'n2', { n1: 1 }],
        ['recv', 'pong', 'n2:7', 'n2', { n1: 2, n2: 4 }],
      ],
    );
  });

  it('refuses to send without a destination or type', () => {
    const { rt } = make(fakeHost(dir));
    const send = rt.send as (to: unknown, type: unknown, body: null) => void;
    assert.throws(() => send(undefined, 'x', null), /rt.send: destination must be an endpoint name, got undefined/);
    assert.throws(() => send('n2', '', null), /message type must be a non-empty string/);
  });

  it('keeps message ids unique and clocks monotonic across restarts', () => {
    const host = fakeHost(dir);
    const { rt } = make(host, 2, 10);
    rt.send('n2', 'ping', null);
    assert.equal(host.sent[0]?.msgId, 'n1#2:1');
    assert.deepEqual(host.sent[0]?.vc, { n1: 11 });
  });

  it('logs with the caller\'s source location relative to the source root', () => {
    const host = fakeHost(dir);
    logFromFixture(make(host).rt);
    const line = fs.readFileSync(path.join(fixtures, 'log-caller.ts'), 'utf8').split('\n').findIndex((l) => l.includes('LOG-CALLER-LINE')) + 1;
    assert.deepEqual(host.events[0], { ts: 0, node: 'n1', kind: 'log', level: 'info', msg: 'hello from the fixture', vc: { n1: 1 }, src: { file: 'log-caller.ts', line } });
  });

  it('applies clock skew, seeded randomness, exposed state and crash reports', () => {
    const host = fakeHost(dir);
    const handle = make(host);
    assert.equal(handle.rt.now(), 1_000_000);
    handle.setSkew(-500);
    assert.equal(handle.rt.now(), 999_500);
    assert.deepEqual(Array.from({ length: 5 }, handle.rt.random), Array.from({ length: 5 }, make(fakeHost(dir)).rt.random));
    assert.equal(handle.state(), null);
    handle.rt.exposeState(() => ({ term: 3 }));
    assert.deepEqual(handle.state(), { term: 3 });
    handle.reportCrash(new Error('boom'));
    const crash = host.events.at(-1);
    assert.equal(crash?.level, 'error');
    assert.equal(crash?.msg, 'uncaught exception: boom');
    // This test file is outside the source root, so its path stays absolute.
    assert.deepEqual(crash?.src?.file, __filename);
  });

  it('reports a message nobody handles', () => {
    const host = fakeHost(dir);
    make(host).deliver({ t: 'msg', msgId: 'n2:1', from: 'n2', to: 'n1', type: 'lost', body: null });
    assert.match(host.events.at(-1)?.msg ?? '', /no message handler registered; lost from n2/);
  });
});

describe('runtime: source locations', () => {
  it('takes the first frame inside the source root for errors', () => {
    const stack = [
      'Error: x',
      '    at lib (node:internal/whatever:1:1)',
      '    at dep (/elsewhere/node_modules/dep/index.js:10:2)',
      '    at Raft.onVote (file:///repo/bugs/raft/src/raft.mjs:120:7)',
    ].join('\n');
    assert.deepEqual(errorLocation(stack, '/repo/bugs/raft'), { file: 'src/raft.mjs', line: 120 });
    assert.deepEqual(errorLocation(stack, '/nowhere'), { file: '/elsewhere/node_modules/dep/index.js', line: 10 });
  });
});

describe('runtime: wire and environment', () => {
  it('decodes frames and names what is wrong with bad ones', () => {
    const hello = decodeFrame(ToRouterFrame, '{"t":"hello","node":"n1","role":"node","statePort":4000,"pid":12}');
    assert.deepEqual(hello, { ok: true, frame: { t: 'hello', node: 'n1', role: 'node', statePort: 4000, pid: 12 } });
    const skew = decodeFrame(FromRouterFrame, '{"t":"skew","offsetMs":-20}');
    assert.ok(skew.ok);
    const bad = decodeFrame(ToRouterFrame, '{"t":"msg","msgId":"a:1","from":"a","type":"x","body":null}');
    assert.ok(!bad.ok && /to/.test(bad.error));
    assert.ok(!decodeFrame(ToRouterFrame, '{nope').ok);
  });

  const goodEnv = {
    DDBENCH_NODE_ID: 'n1',
    DDBENCH_NODES: 'n1,n2',
    DDBENCH_ROUTER: '127.0.0.1:4567',
    DDBENCH_ENTRY: '/x/system.mjs',
    DDBENCH_CONFIG: '{"electionMs":150}',
    DDBENCH_DATA_DIR: '/tmp/data',
    DDBENCH_SEED: '7',
    DDBENCH_T0: '1700000000000.25',
    DDBENCH_SRC_ROOT: '/x',
  };

  it('parses a good host environment', () => {
    const parsed = parseHostEnv(goodEnv);
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.env.DDBENCH_ROUTER, { host: '127.0.0.1', port: 4567 });
    assert.deepEqual(parsed.env.DDBENCH_NODES, ['n1', 'n2']);
    assert.deepEqual(parsed.env.DDBENCH_CONFIG, { electionMs: 150 });
    assert.equal(parsed.env.DDBENCH_T0, 1700000000000.25);
    assert.equal(parsed.env.DDBENCH_INCARNATION, 0);
  });

  it('names every bad variable', () => {
    const parsed = parseHostEnv({ ...goodEnv, DDBENCH_ROUTER: 'nowhere', DDBENCH_CONFIG: '[1]', DDBENCH_ENTRY: 'relative.mjs', DDBENCH_SEED: undefined });
    assert.ok(!parsed.ok);
    for (const name of ['DDBENCH_ROUTER', 'DDBENCH_CONFIG', 'DDBENCH_ENTRY', 'DDBENCH_SEED']) assert.match(parsed.error, new RegExp(name));
  });

  it('makes the live host exit with a clear message on a bad environment', async function () {
    this.timeout(60_000);
    await ensureLiveHost();
    const result = spawnSync(process.execPath, [liveHostPath], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /ddbench live host: bad environment/);
    assert.match(result.stderr, /DDBENCH_NODE_ID/);
  });
});
