import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SystemEntry } from '../../src/core/bugs/catalog';
import type { ClusterClient } from '../../src/core/cluster/types';
import type { Event } from '../../src/core/events/event';
import { clusterContext, ProgressTimeout } from '../../src/core/scenario/context';
import { eventsDigest, writeEventsFile } from '../../src/core/sim/events-file';
import type { SimOptionsInput } from '../../src/core/sim/options';
import { simulateSeeds } from '../../src/core/sim/sandboxed';
import type { SeedSearchResult } from '../../src/core/sim/search';
import { searchSeeds } from '../../src/core/sim/seeds';
import { shrinkFailure } from '../../src/core/sim/shrink';
import { SimCluster } from '../../src/core/sim/sim-cluster';
import { runSimTrial } from '../../src/core/sim/sim-trial';
import { loadSystemModule } from '../../src/core/sim/system-module';
import { prepareTargetFile } from '../../src/core/sim/target';
import { seedsForConfidence } from '../../src/core/verify/simulate';
import type { Json, SystemModule } from '../../src/runtime/types';

const fixtures = path.resolve(__dirname, '..', 'fixtures');
const echoDir = path.join(fixtures, 'echo-system');
const raceDir = path.join(fixtures, 'sim-race');
const leakyDir = path.join(fixtures, 'sim-leaky');

function fixtureSystem(id: string, dir: string, entry: string): SystemEntry {
  return {
    id,
    kind: 'miniature',
    dir,
    manifest: { id, name: id, description: `the ${id} fixture`, modelledAfter: { project: id, url: 'https://example.org' }, entry, client: [], nodes: ['n1', 'n2', 'n3'], config: {}, tests: [] },
  };
}

function field(body: Json, key: string): Json | undefined {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? body[key] : undefined;
}

/** Runs harness code on the cluster's virtual time and gives its result. */
async function within<T>(cluster: SimCluster, work: () => Promise<T>, budgetMs = 60_000): Promise<T> {
  const r = await cluster.drive(work(), budgetMs);
  if (r.end === 'done') return r.value;
  if (r.end === 'failed') throw r.error;
  throw new Error(`the simulation ended (${r.end}) before the harness work did`);
}

describe('simulation: cluster', function () {
  this.timeout(60_000);
  let echo: SystemModule;
  let cluster: SimCluster;
  let client: ClusterClient;

  before(async () => {
    echo = await loadSystemModule(path.join(echoDir, 'echo.mjs'));
  });

  async function startEcho(seed = 1, sim?: SimOptionsInput): Promise<void> {
    cluster = new SimCluster({ system: echo, sourceDir: echoDir, nodes: ['n1', 'n2', 'n3'], config: { greeting: 'hi' }, seed, sim });
    await cluster.start();
    client = await cluster.client('c');
  }

  afterEach(async () => {
    await cluster?.stop();
  });

  const sleep = (ms: number) => new Promise<void>((resolve) => cluster.clock.setTimer(ms, resolve));
  const ofMsg = (msgId: string, kind: Event['kind']) => cluster.events().filter((e) => e.msgId === msgId && e.kind === kind);

  it('runs every node in one process on virtual time, with the live event shape', async () => {
    await startEcho();
    const reply = await within(cluster, () => client.request('n1', 'echo', { text: 'hello' }, 1000));
    assert.equal(field(reply, 'text'), 'hello');
    assert.equal(field(reply, 'by'), 'n1');
    const events = cluster.events();
    assert.deepEqual(events.map((e) => e.id), events.map((_, i) => String(i + 1)), 'ids are sequential');
    const started = events.find((e) => e.node === 'n1' && e.msg === 'echo node started');
    const line = fs.readFileSync(path.join(echoDir, 'echo.mjs'), 'utf8').split('\n').findIndex((l) => l.includes('ECHO-START-LOG')) + 1;
    assert.deepEqual(started?.src, { file: 'echo.mjs', line });
    const send = events.find((e) => e.kind === 'send' && e.node === 'c');
    const recv = events.find((e) => e.kind === 'recv' && e.msgId === send?.msgId);
    assert.equal(recv?.node, 'n1');
    assert.ok(recv !== undefined && send !== undefined && recv.ts > send.ts, 'a message takes virtual time');
    assert.deepEqual(cluster.nodes().map((n) => n.status), ['running', 'running', 'running']);
    assert.deepEqual(field(await cluster.state('n2'), 'config'), { greeting: 'hi' });
  });

  it('lets the harness continue at the virtual instant that resolved its wait', async () => {
    await startEcho();
    const at = await within(cluster, async () => {
      await client.request('n2', 'echo', { text: 'x' }, 1000);
      return cluster.now();
    });
    const reply = cluster.events().find((e) => e.node === 'c' && e.kind === 'recv');
    assert.equal(at, reply?.ts);
  });

  it('drops messages by a link fault rule, and a request times out on virtual time', async () => {
    await startEcho();
    cluster.addLinkFault({ from: 'c', to: 'n1', type: 'echo', drop: 1 });
    const before = cluster.now();
    await within(cluster, () => assert.rejects(client.request('n1', 'echo', { text: 'lost' }, 500), /no reply from n1 to echo .* within 500 ms/));
    assert.equal(cluster.now() - before, 500_000);
    const drop = cluster.events().find((e) => e.node === 'router' && e.msg === 'drop');
    assert.deepEqual(drop?.fields, { from: 'c', to: 'n1', type: 'echo', reason: 'rule', rule: 0 });
    assert.equal(ofMsg(drop.msgId!, 'recv').length, 0);
  });

  it('duplicates messages', async () => {
    await startEcho();
    cluster.addLinkFault({ from: 'c', to: 'n1', duplicate: 1 });
    await within(cluster, async () => {
      await client.request('n1', 'echo', { text: 'twice' }, 1000);
      await sleep(100);
    });
    const send = cluster.events().find((e) => e.node === 'c' && e.kind === 'send');
    assert.equal(ofMsg(send!.msgId!, 'recv').length, 2);
    assert.equal(field(await cluster.state('n1'), 'received'), 2);
    assert.ok(cluster.events().some((e) => e.node === 'router' && e.msg === 'duplicate'));
  });

  it('reorders messages: a held message goes after the next one on its link', async () => {
    await startEcho();
    cluster.addLinkFault({ from: 'c', to: 'n1', reorder: 1 });
    await within(cluster, () => Promise.all([client.request('n1', 'echo', { text: 'first' }, 2000), client.request('n1', 'echo', { text: 'second' }, 2000)]));
    const received = cluster.events().filter((e) => e.node === 'n1' && e.kind === 'recv').map((e) => field(e.fields?.body as Json, 'text'));
    assert.deepEqual(received, ['second', 'first']);
    assert.equal(cluster.events().filter((e) => e.node === 'router' && e.msg === 'reorder').length, 1);
  });

  it('delays messages by a rule', async () => {
    await startEcho();
    cluster.addLinkFault({ from: 'c', to: 'n1', delayMs: [300, 300] });
    await within(cluster, () => client.request('n1', 'echo', { text: 'slow' }, 2000));
    const send = cluster.events().find((e) => e.node === 'c' && e.kind === 'send')!;
    const recv = ofMsg(send.msgId!, 'recv')[0]!;
    assert.ok(recv.ts - send.ts >= 300_000, `delivered after ${recv.ts - send.ts} µs`);
    assert.deepEqual(cluster.events().find((e) => e.msg === 'delay')?.fields, { from: 'c', to: 'n1', type: 'echo', reason: 'rule', delayMs: 300 });
  });

  it('partitions and heals', async () => {
    await startEcho();
    cluster.partition([['n1'], ['n2', 'n3']]);
    await within(cluster, () => assert.rejects(client.request('n1', 'relay', { via: 'n2' }, 1000), /no reply/));
    assert.equal(cluster.events().find((e) => e.msg === 'drop')?.fields?.reason, 'partition');
    cluster.heal();
    const reply = await within(cluster, () => client.request('n1', 'relay', { via: 'n2' }, 1000));
    assert.equal(field(reply, 'by'), 'n2');
    assert.deepEqual(
      cluster.events().filter((e) => e.kind === 'fault' && e.node === 'harness').map((e) => e.msg),
      ['partition', 'heal'],
    );
  });

  it('loses unsynced writes on a crash and keeps synced ones across the restart', async () => {
    await startEcho();
    await within(cluster, async () => {
      await client.request('n1', 'put', { key: 'synced', value: 'kept', sync: true }, 1000);
      await client.request('n1', 'put', { key: 'buffered', value: 'lost' }, 1000);
      assert.equal(field(await client.request('n1', 'get', { key: 'buffered' }, 1000), 'value'), 'lost', 'a node reads its own unsynced writes');
      await cluster.kill('n1');
      assert.equal(cluster.nodes()[0]?.status, 'stopped');
      await assert.rejects(client.request('n1', 'echo', { text: 'nobody' }, 200), /no reply/);
      await cluster.restart('n1');
    });
    assert.equal(cluster.events().filter((e) => e.msg === 'drop').at(-1)?.fields?.reason, 'unreachable');
    const values = await within(cluster, async () => [
      field(await client.request('n1', 'get', { key: 'synced' }, 1000), 'value'),
      field(await client.request('n1', 'get', { key: 'buffered' }, 1000), 'value'),
    ]);
    assert.deepEqual(values, ['kept', null]);
    const procs = cluster.events().filter((e) => e.node === 'n1' && e.kind === 'proc').map((e) => `${e.msg} ${JSON.stringify(e.fields)}`);
    assert.deepEqual(procs, ['start {"incarnation":0}', 'kill {"incarnation":0}', 'exit {"incarnation":0,"code":null,"signal":"SIGKILL"}', 'restart {"incarnation":1}']);
    // The restarted node's own vector-clock counter continues, so its events order after its earlier ones.
    const n1 = cluster.events().filter((e) => e.node === 'n1' && e.vc);
    const before = n1.filter((e) => e.msg === 'echo node started')[0]!;
    const after = n1.filter((e) => e.msg === 'echo node started')[1]!;
    assert.ok(after.vc!.n1! > before.vc!.n1!);
  });

  it('crashes a node whose code throws, as the process would', async () => {
    await startEcho();
    await within(cluster, () => assert.rejects(client.request('n2', 'crash', {}, 300), /no reply/));
    const n2 = cluster.nodes().find((n) => n.id === 'n2');
    assert.deepEqual([n2?.status, n2?.exitCode], ['exited', 1]);
    const report = cluster.events().find((e) => e.node === 'n2' && e.level === 'error' && e.kind === 'log');
    assert.equal(report?.msg, 'uncaught exception: crash requested by the test');
    assert.equal(report?.src?.file, 'echo.mjs');
    assert.equal(cluster.events().find((e) => e.node === 'n2' && e.msg === 'exit')?.level, 'error');
    await within(cluster, () => cluster.restart('n2'));
    assert.equal(field(await within(cluster, () => client.request('n2', 'echo', { text: 'back' }, 1000)), 'text'), 'back');
  });

  it('pauses a node: it runs nothing, its messages and timers wait until it resumes', async () => {
    await startEcho(3, { timerJitterUs: 0 });
    const timer = client.request('n1', 'timer', { ms: 100 }, 10_000);
    await within(cluster, async () => {
      await sleep(20);
      await cluster.pause('n1');
    });
    const echo = client.request('n1', 'echo', { text: 'queued' }, 10_000);
    await within(cluster, () => sleep(1000));
    assert.equal(cluster.nodes()[0]?.status, 'paused');
    await assert.rejects(cluster.state('n1'), /paused/);
    assert.equal(cluster.events().filter((e) => e.node === 'n1' && e.kind === 'recv').length, 1, 'only the timer request, before the pause');
    const resumedAt = cluster.now();
    await cluster.resume('n1');
    await within(cluster, () => Promise.all([timer, echo]));
    const late = cluster.events().filter((e) => e.node === 'n1' && e.kind !== 'proc' && e.ts >= resumedAt);
    assert.ok(late.some((e) => e.kind === 'send' && e.msg === 'timer-reply'), 'the overdue timer fired on resume');
    assert.ok(late.some((e) => e.kind === 'recv' && e.msg === 'echo'), 'the queued message arrived on resume');
    assert.deepEqual(cluster.events().filter((e) => e.node === 'n1' && e.kind === 'proc').map((e) => e.msg), ['start', 'pause', 'resume']);
  });

  it('skews a node clock, and the skew outlives a restart', async () => {
    await startEcho();
    cluster.skewClock('n1', 5000);
    const gap = async () => {
      const [a, b] = await Promise.all([client.request('n1', 'now', {}, 1000), client.request('n2', 'now', {}, 1000)]);
      return Number(field(a, 'now')) - Number(field(b, 'now'));
    };
    const first = await within(cluster, gap);
    assert.ok(first > 4990 && first < 5010, `n1 is ${first} ms ahead`);
    await within(cluster, () => cluster.restart('n1'));
    const second = await within(cluster, gap);
    assert.ok(second > 4990 && second < 5010, `after the restart n1 is ${second} ms ahead`);
    assert.equal(cluster.events().find((e) => e.msg === 'clock skew')?.node, 'n1');
  });

  it('turns what a node prints into its log events', async () => {
    await startEcho();
    await within(cluster, () => client.request('n3', 'print', {}, 1000));
    const printed = cluster.events().filter((e) => e.node === 'n3' && (e.msg === 'plain stdout line' || e.msg === 'plain stderr line'));
    assert.deepEqual(printed.map((e) => [e.kind, e.level]), [['log', 'info'], ['log', 'error']]);
  });

  it("waits on virtual time: sleeps and waitFor timeouts take no real waiting", async () => {
    await startEcho();
    const ctx = clusterContext(cluster, 1, ['n1', 'n2', 'n3'], cluster.clock);
    const t0 = cluster.now();
    await within(cluster, () => ctx.sleep(60_000), 120_000);
    assert.equal(cluster.now() - t0, 60_000_000);
    const t1 = cluster.now();
    await within(cluster, () => assert.rejects(ctx.waitFor(() => false, { timeoutMs: 2000, description: 'nothing' }), ProgressTimeout));
    assert.equal(cluster.now() - t1, 2_000_000);
    const seen = await within(cluster, async () => {
      const wait = ctx.waitFor((e) => e.kind === 'recv' && e.node === 'n3', { timeoutMs: 2000, description: 'n3 to receive' });
      await client.request('n3', 'echo', { text: 'x' }, 1000);
      return wait;
    });
    assert.equal(seen.node, 'n3');
    ctx.dispose();
  });

  it('keeps deadlines and polls until a condition holds on virtual time, failing a poll past its timeout as a waitFor does', async () => {
    await startEcho();
    const ctx = clusterContext(cluster, 1, ['n1', 'n2', 'n3'], cluster.clock);
    const t0 = cluster.now();
    const d = ctx.deadline(1500);
    let polls = 0;
    const expiredAt = await within(cluster, () => ctx.until(() => (polls++, d.expired && cluster.now()), { timeoutMs: 5000, everyMs: 250, description: 'the deadline' }));
    assert.equal(expiredAt - t0, 1_500_000);
    assert.equal(polls, 7, 'polled at 0, 250, ..., 1500 ms');
    const t1 = cluster.now();
    const reply = await within(cluster, () => ctx.until(async () => (await client.request('n2', 'echo', { text: 'y' }, 1000)) as Json, { timeoutMs: 1000, description: 'an answer' }));
    assert.equal(field(reply, 'text'), 'y');
    assert.ok(cluster.now() - t1 < 1_000_000, 'a first truthy answer ends the poll at once');
    const t2 = cluster.now();
    await within(cluster, () => assert.rejects(ctx.until(() => false, { timeoutMs: 1000, everyMs: 300, description: 'never' }), ProgressTimeout));
    assert.equal(cluster.now() - t2, 1_200_000, 'the poll after the timeout gives up');
    assert.equal(cluster.events().filter((e) => e.msg === 'progress: never' && e.kind === 'check').length, 1);
    ctx.dispose();
  });

  it('fails the run as soon as a background task fails; one that succeeds leaves it alone', async () => {
    await startEcho();
    const ctx = clusterContext(cluster, 1, ['n1', 'n2', 'n3'], cluster.clock);
    const quiet = ctx.background(() => ctx.sleep(100).then(() => 'done'));
    const t0 = cluster.now();
    const boom = new Error('background broke');
    ctx.background(() => ctx.sleep(500).then(() => Promise.reject(boom)));
    const run = await cluster.drive(ctx.supervise(ctx.sleep(10_000)), 60_000);
    assert.equal(run.end, 'failed');
    assert.equal(run.end === 'failed' && run.error, boom);
    assert.equal(cluster.now() - t0, 500_000);
    assert.equal(await quiet, 'done');
    ctx.dispose();
  });

  it('after the trial is over, a scenario loop that outlived it sets no more timers (a timed-out trial must not keep the process alive)', async () => {
    await startEcho();
    let timersSet = 0;
    const counting = { setTimer: (ms: number, fn: () => void) => (timersSet++, cluster.clock.setTimer(ms, fn)) };
    const ctx = clusterContext(cluster, 1, ['n1', 'n2', 'n3'], counting);
    let rounds = 0;
    const keepAlive = (async () => {
      for (;;) {
        rounds++;
        await ctx.sleep(100);
      }
    })();
    await within(cluster, () => ctx.sleep(1000));
    ctx.dispose();
    const [setAtDispose, roundsAtDispose] = [timersSet, rounds];
    await within(cluster, () => new Promise<void>((resolve) => cluster.clock.setTimer(5000, resolve)));
    assert.ok(roundsAtDispose >= 5);
    assert.equal(timersSet, setAtDispose, 'no timer set after dispose');
    assert.ok(rounds <= roundsAtDispose + 1, 'the loop stopped');
    let waited = false;
    void ctx.waitFor(() => true, { timeoutMs: 10, description: 'anything', includePast: true }).then(() => (waited = true));
    await within(cluster, () => new Promise<void>((resolve) => cluster.clock.setTimer(100, resolve)));
    assert.equal(waited, false, 'a wait begun after the trial never ends');
    assert.equal(timersSet, setAtDispose);
    void keepAlive;
  });
});

describe('simulation: seeds, verdicts and shrinking', function () {
  this.timeout(120_000);
  const race = fixtureSystem('race', raceDir, 'race.mjs');
  // Only message latencies are drawn, so the race is decided by the network alone.
  const latencyOnly: SimOptionsInput = { spawnDelayUs: [0, 0], timerJitterUs: 0 };

  it('gives the same events, byte for byte, for the same seed, and other interleavings for other seeds', async () => {
    const target = await prepareTargetFile(race, raceDir, path.join(raceDir, 'scenarios', 'first-write-wins.mjs'));
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-sim-test-'));
    try {
      const files = [];
      for (const i of [0, 1]) {
        const { cluster } = await runSimTrial(target, { seed: 42 });
        files.push(path.join(tmp, `events-${i}.jsonl`));
        writeEventsFile(files[i]!, cluster.events());
      }
      assert.ok(fs.readFileSync(files[0]!).equals(fs.readFileSync(files[1]!)), 'two runs of seed 42 wrote identical files');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
    const orders = new Set<string>();
    const digests = new Set<string>();
    for (let seed = 1; seed <= 8; seed++) {
      const { cluster } = await runSimTrial(target, { seed, sim: latencyOnly });
      digests.add(eventsDigest(cluster.events()));
      orders.add(cluster.events().filter((e) => e.kind === 'recv' && e.node === 'n3').map((e) => e.peer).join(','));
    }
    assert.equal(digests.size, 8);
    assert.deepEqual([...orders].sort(), ['n1,n2', 'n2,n1'], 'both orders of arrival occur');
  });

  it('searches seeds, stops at the first failure when asked, and finds every failing seed otherwise', async () => {
    const target = await prepareTargetFile(race, raceDir, path.join(raceDir, 'scenarios', 'first-write-wins.mjs'));
    const all = await searchSeeds(target, { seeds: 20, from: 1, sim: latencyOnly });
    assert.equal(all.seedsRun, 20);
    assert.ok(all.failedSeeds.length > 0 && all.failedSeeds.length < 20, `failed: ${all.failedSeeds.join(',')}`);
    assert.equal(all.firstFailingSeed, all.failedSeeds[0]);
    assert.equal(all.firstFailure?.violation?.check, 'n1 wrote first');
    assert.equal(all.verdicts.fail, all.failedSeeds.length);
    const first = await searchSeeds(target, { seeds: 20, from: 1, sim: latencyOnly, stopAtFirstFailure: true });
    assert.equal(first.seedsRun, all.failedSeeds[0]);
    assert.deepEqual(first.failedSeeds, [all.failedSeeds[0]]);
    assert.ok(first.seedsPerSecond > 0);
  });

  it('runs seeds in worker threads with the result of one thread', async () => {
    // Timings aside, which no two runs share.
    const comparable = ({ seedsPerSecond: _s, elapsedMs: _e, firstFailure, ...rest }: SeedSearchResult) => ({ ...rest, firstFailure: firstFailure && { ...firstFailure, durationMs: 0 } });
    for (const stopAtFirstFailure of [false, true]) {
      const opts = { seeds: 24, from: 3, sim: latencyOnly, checkDeterminism: true, stopAtFirstFailure };
      const one = await simulateSeeds(race, raceDir, 'first-write-wins', { ...opts, concurrency: 1 });
      const seen: number[] = [];
      const two = await simulateSeeds(race, raceDir, 'first-write-wins', { ...opts, concurrency: 2, onSeed: (r) => seen.push(r.seed) });
      assert.deepEqual(comparable(two), comparable(one));
      assert.ok(seen.length >= two.seedsRun);
      assert.ok(one.failedSeeds.length > 0);
    }
  });

  it('shrinks a failing schedule to the one decision that makes it fail', async () => {
    const target = await prepareTargetFile(race, raceDir, path.join(raceDir, 'scenarios', 'first-write-wins.mjs'));
    const { firstFailingSeed } = await searchSeeds(target, { seeds: 50, sim: latencyOnly, stopAtFirstFailure: true });
    assert.ok(firstFailingSeed !== undefined);
    const shrunk = await shrinkFailure(target, firstFailingSeed, { sim: latencyOnly });
    // With every other latency at its minimum, n2's write wins only if n1's own write is slow.
    assert.equal(shrunk.kept.length, 1, JSON.stringify(shrunk.kept));
    assert.equal(shrunk.kept[0]?.kind, 'latency');
    assert.match(shrunk.kept[0]!.subject, /^n1→n3 write /);
    assert.ok(shrunk.minimal);
    assert.equal(shrunk.failure, 'fail: n1 wrote first');
    assert.equal(shrunk.original.nonDefault, 2);
    assert.equal(shrunk.shrunk.nonDefault, 1);
    // The shrunk schedule replays: only its kept draws keep their seeded values.
    const again = await runSimTrial(target, { seed: firstFailingSeed, sim: latencyOnly, keep: new Set(shrunk.keep) });
    assert.equal(again.result.verdict, 'fail');
    const none = await runSimTrial(target, { seed: firstFailingSeed, sim: latencyOnly, keep: new Set() });
    assert.equal(none.result.verdict, 'pass', 'with every draw at its fallback n1 wins');
  });

  it("judges a scenario past its budget as a timeout at the budget's virtual instant", async () => {
    const target = await prepareTargetFile(race, raceDir, path.join(raceDir, 'scenarios', 'sleepy.mjs'));
    const { result, cluster } = await runSimTrial(target, { seed: 1 });
    assert.equal(result.verdict, 'timeout');
    // The budget starts once every node is up (spawn delays are at most 50 ms).
    assert.ok(result.virtualMs >= 1000 && result.virtualMs <= 1050, `ended at ${result.virtualMs} ms`);
    assert.equal(cluster.events().find((e) => e.msg === 'trial timeout')?.kind, 'check');
  });

  it('fails a trial whose background wait times out, at the timeout', async () => {
    const target = await prepareTargetFile(race, raceDir, path.join(raceDir, 'scenarios', 'background-wait.mjs'));
    const { result } = await runSimTrial(target, { seed: 1 });
    assert.equal(result.verdict, 'fail');
    assert.equal(result.violation?.check, 'progress: an event that never comes');
    assert.ok(result.virtualMs >= 2000 && result.virtualMs <= 2050, `ended at ${result.virtualMs} ms`);
  });

  it('notices a system whose seeds do not replay (module-level state)', async () => {
    const leaky = fixtureSystem('leaky', leakyDir, 'leaky.mjs');
    const target = await prepareTargetFile(leaky, leakyDir, path.join(leakyDir, 'scenarios', 'idle.mjs'));
    const r = await searchSeeds(target, { seeds: 2, checkDeterminism: true });
    assert.deepEqual(r.nondeterministicSeeds, [1, 2]);
    const race2 = await prepareTargetFile(race, raceDir, path.join(raceDir, 'scenarios', 'first-write-wins.mjs'));
    assert.deepEqual((await searchSeeds(race2, { seeds: 3, checkDeterminism: true })).nondeterministicSeeds, []);
  });

  it('locates log calls the same with and without source maps', async () => {
    const target = await prepareTargetFile(race, raceDir, path.join(raceDir, 'scenarios', 'sleepy.mjs'));
    const echoTarget = { ...target, system: await loadSystemModule(path.join(echoDir, 'echo.mjs')), srcRoot: echoDir };
    const digest = async () => eventsDigest((await runSimTrial(echoTarget, { seed: 3 })).cluster.events());
    const enabled = process.sourceMapsEnabled;
    try {
      process.setSourceMapsEnabled(true);
      const mapped = await digest();
      process.setSourceMapsEnabled(false);
      assert.equal(await digest(), mapped);
    } finally {
      process.setSourceMapsEnabled(enabled);
    }
  });

  it('sizes verification by the failure rate: N >= ln(0.05) / ln(1 - p), with a floor', () => {
    assert.equal(seedsForConfidence(0.1, 1), 29);
    assert.equal(seedsForConfidence(0.5, 1), 5);
    assert.equal(seedsForConfidence(0.01, 100), 299);
    assert.equal(seedsForConfidence(0.9, 100), 100);
    assert.equal(seedsForConfidence(0, 100), 100);
    assert.equal(seedsForConfidence(1, 1000), 1000);
  });
});
