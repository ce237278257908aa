import assert from 'node:assert/strict';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { createCluster, ProcessCluster, reapLeftovers, registryDir } from '../../src/core/cluster';
import type { Router } from '../../src/core/cluster/router';
import type { Cluster, ClusterClient } from '../../src/core/cluster/types';
import { bwrapProgram } from '../../src/core/sandbox/isolation';
import { Event } from '../../src/core/events/event';
import type { Json } from '../../src/runtime/types';
import { ensureLiveHost } from '../fixtures/live-host-build';
import { isGone, isListening, processState, registryFileFor, waitUntilGone } from '../support/processes';

const fixtures = path.resolve(__dirname, '..', 'fixtures');
const echoDir = path.join(fixtures, 'echo-system');
const REPLY_MS = 15_000;

function tempRunDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-cluster-'));
}

function echoCluster(runDir: string, nodes = ['n1', 'n2', 'n3'], extra: Partial<ConstructorParameters<typeof ProcessCluster>[0]> = {}): Cluster {
  return createCluster({ sourceDir: echoDir, entry: 'echo.mjs', nodes, config: { greeting: 'hi' }, runDir, seed: 5, ...extra });
}

/** Resolves with the first event, past or future, matching `pred`. */
function waitForEvent(cluster: Cluster, pred: (e: Event) => boolean): Promise<Event> {
  const past = cluster.events().find(pred);
  if (past !== undefined) return Promise.resolve(past);
  return new Promise((resolve) => {
    const off = cluster.onEvent((e) => {
      if (pred(e)) {
        off();
        resolve(e);
      }
    });
  });
}

function field(body: Json, key: string): Json | undefined {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? body[key] : undefined;
}

/** a happened before b: a <= b in every component and a != b. */
function happenedBefore(a: Record<string, number> | undefined, b: Record<string, number> | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => (a[k] ?? 0) <= (b[k] ?? 0)) && [...keys].some((k) => (a[k] ?? 0) < (b[k] ?? 0));
}

function echoLine(): number {
  const lines = fs.readFileSync(path.join(echoDir, 'echo.mjs'), 'utf8').split('\n');
  return lines.findIndex((l) => l.includes('ECHO-START-LOG')) + 1;
}

describe('process cluster', function () {
  this.timeout(60_000);
  before(() => ensureLiveHost());

  describe('a three-node echo cluster', () => {
    let runDir: string;
    let cluster: Cluster;
    let client: ClusterClient;

    before(async () => {
      runDir = tempRunDir();
      cluster = echoCluster(runDir);
      await cluster.start();
      client = await cluster.client('c1');
    });
    after(async () => {
      await cluster.stop();
      fs.rmSync(runDir, { recursive: true, force: true });
    });

    it('starts every node with a pid and a state port, and logs with source locations', async () => {
      const infos = cluster.nodes();
      assert.deepEqual(infos.map((n) => [n.id, n.status]), [['n1', 'running'], ['n2', 'running'], ['n3', 'running']]);
      for (const info of infos) {
        assert.ok(info.pid !== undefined && info.statePort !== undefined);
        assert.ok(cluster.events().some((e) => e.node === info.id && e.kind === 'proc' && e.msg === 'start'));
      }
      const started = await waitForEvent(cluster, (e) => e.node === 'n3' && e.msg === 'echo node started');
      assert.deepEqual(started.src, { file: 'echo.mjs', line: echoLine() });
      assert.deepEqual(started.fields, { nodes: 3 });
      assert.equal(started.level, 'info');
      assert.deepEqual(started.vc, { n3: 1 });
    });

    it('answers client requests, with the client as its own lane', async () => {
      const reply = await client.request('n1', 'echo', { text: 'hello' }, REPLY_MS);
      assert.equal(field(reply, 'text'), 'hello');
      const reqId = field(reply, 'reqId');
      assert.equal(typeof reqId, 'string');
      const send = cluster.events().find((e) => e.node === 'c1' && e.kind === 'send' && field(e.fields?.body as Json, 'reqId') === reqId);
      assert.ok(send?.msgId !== undefined);
      const recv = await waitForEvent(cluster, (e) => e.node === 'n1' && e.kind === 'recv' && e.msgId === send.msgId);
      assert.equal(recv.peer, 'c1');
      assert.ok(happenedBefore(send.vc, recv.vc));
      const back = cluster.events().find((e) => e.node === 'c1' && e.kind === 'recv' && e.msg === 'echo-reply');
      assert.equal(back?.peer, 'n1');
      assert.ok(happenedBefore(recv.vc, back?.vc));
    });

    it('exchanges messages between nodes as send/recv pairs ordered by vector clocks', async () => {
      const reply = await client.request('n1', 'relay', { via: 'n2' }, REPLY_MS);
      assert.equal(field(reply, 'by'), 'n2');
      // Node events come over the nodes' stdout, which may lag behind the reply that came through the router.
      const ping = await waitForEvent(cluster, (e) => e.node === 'n1' && e.kind === 'send' && e.msg === 'ping');
      const pingRecv = await waitForEvent(cluster, (e) => e.node === 'n2' && e.kind === 'recv' && e.msgId === ping.msgId);
      const pong = await waitForEvent(cluster, (e) => e.node === 'n2' && e.kind === 'send' && e.msg === 'pong');
      const pongRecv = await waitForEvent(cluster, (e) => e.node === 'n1' && e.kind === 'recv' && e.msgId === pong.msgId);
      assert.equal(ping.peer, 'n2');
      assert.equal(pingRecv.peer, 'n1');
      assert.ok(happenedBefore(ping.vc, pingRecv.vc));
      assert.ok(happenedBefore(pingRecv.vc, pong.vc));
      assert.ok(happenedBefore(pong.vc, pongRecv.vc));
    });

    it('runs system timers', async () => {
      assert.equal(field(await client.request('n1', 'timer', { ms: 5 }, REPLY_MS), 'fired'), true);
    });

    it('turns output that is not an event into log events', async () => {
      await client.request('n1', 'print', {}, REPLY_MS);
      const out = await waitForEvent(cluster, (e) => e.node === 'n1' && e.msg === 'plain stdout line');
      const err = await waitForEvent(cluster, (e) => e.node === 'n1' && e.msg === 'plain stderr line');
      assert.deepEqual([out.kind, out.level, err.kind, err.level], ['log', 'info', 'log', 'error']);
    });

    it('serves each node\'s exposed state', async () => {
      const state = await cluster.state('n2');
      assert.equal(field(state, 'id'), 'n2');
      assert.deepEqual(field(state, 'config'), { greeting: 'hi' });
      await assert.rejects(cluster.state('n9'), /unknown node n9; the nodes are n1, n2, n3/);
    });

    it('skews a node\'s clock', async () => {
      const hour = 3_600_000;
      cluster.skewClock('n3', hour);
      const reply = await client.request('n3', 'now', {}, REPLY_MS);
      const offset = Number(field(reply, 'now')) - Date.now();
      assert.ok(offset > hour / 2, `offset ${offset}`);
      assert.ok(cluster.events().some((e) => e.node === 'n3' && e.kind === 'fault' && e.msg === 'clock skew'));
      cluster.skewClock('n3', 0);
    });

    it('partitions and heals through the router', async () => {
      cluster.partition([['c1', 'n1'], ['n2']]);
      await assert.rejects(client.request('n1', 'relay', { via: 'n2' }, 500), /client c1: no reply from n1 to relay .* within 500 ms/);
      const drop = await waitForEvent(cluster, (e) => e.kind === 'fault' && e.msg === 'drop' && e.fields?.reason === 'partition');
      assert.equal(drop.fields?.type, 'ping');
      cluster.heal();
      assert.equal(field(await client.request('n1', 'relay', { via: 'n2' }, REPLY_MS), 'by'), 'n2');
      assert.deepEqual(
        cluster.events().filter((e) => e.node === 'harness' && e.kind === 'fault').map((e) => e.msg),
        ['partition', 'heal'],
      );
    });

    it('duplicates messages by link-fault rule', async () => {
      cluster.addLinkFault({ from: 'n1', to: 'n2', type: 'ping', duplicate: 1 });
      const reply = await client.request('n1', 'relay', { via: 'n2' }, REPLY_MS);
      cluster.clearLinkFaults();
      const dup = cluster.events().find((e) => e.kind === 'fault' && e.msg === 'duplicate');
      assert.ok(dup?.msgId !== undefined);
      const copies = (): number => cluster.events().filter((e) => e.node === 'n2' && e.kind === 'recv' && e.msgId === dup.msgId).length;
      await waitForEvent(cluster, () => copies() >= 2);
      assert.equal(copies(), 2);
      assert.equal(field(reply, 'by'), 'n2');
    });

    it('pauses and resumes a node', async () => {
      await cluster.pause('n3');
      const pid = cluster.nodes().find((n) => n.id === 'n3')?.pid ?? 0;
      assert.equal(cluster.nodes().find((n) => n.id === 'n3')?.status, 'paused');
      assert.equal(processState(pid), 'T');
      const pending = client.request('n3', 'echo', { text: 'later' }, REPLY_MS);
      await cluster.resume('n3');
      assert.equal(field(await pending, 'text'), 'later');
      const resumed = cluster.events().find((e) => e.node === 'n3' && e.kind === 'proc' && e.msg === 'resume');
      const received = await waitForEvent(cluster, (e) => e.node === 'n3' && e.kind === 'recv' && field(e.fields?.body as Json, 'text') === 'later');
      assert.ok(Number(received.id) > Number(resumed?.id), 'the paused node received the request only after it was resumed');
    });

    it('kills and restarts a node: only synced writes survive, ids and clocks continue', async () => {
      await client.request('n2', 'put', { key: 'synced', value: 'A', sync: true }, REPLY_MS);
      await client.request('n2', 'put', { key: 'unsynced', value: 'B', sync: false }, REPLY_MS);
      assert.equal(field(await client.request('n2', 'get', { key: 'unsynced' }, REPLY_MS), 'value'), 'B');
      const oldPid = cluster.nodes().find((n) => n.id === 'n2')?.pid ?? 0;
      await cluster.kill('n2');
      // After the kill, every event the process wrote has been read.
      const vcBefore = Math.max(...cluster.events().filter((e) => e.node === 'n2').map((e) => e.vc?.n2 ?? 0));
      assert.equal(cluster.nodes().find((n) => n.id === 'n2')?.status, 'stopped');
      assert.ok(isGone(oldPid));
      await assert.rejects(client.request('n2', 'get', { key: 'synced' }, 300), /no reply/);
      await waitForEvent(cluster, (e) => e.kind === 'fault' && e.fields?.reason === 'unreachable' && e.peer === 'n2');
      await cluster.restart('n2');
      const info = cluster.nodes().find((n) => n.id === 'n2');
      assert.equal(info?.status, 'running');
      assert.notEqual(info?.pid, oldPid);
      assert.equal(field(await client.request('n2', 'get', { key: 'synced' }, REPLY_MS), 'value'), 'A');
      assert.equal(field(await client.request('n2', 'get', { key: 'unsynced' }, REPLY_MS), 'value'), null);
      const procs = cluster.events().filter((e) => e.node === 'n2' && e.kind === 'proc').map((e) => e.msg);
      assert.deepEqual(procs.slice(-4), ['start', 'kill', 'exit', 'restart']);
      const firstAfter = await waitForEvent(cluster, (e) => e.node === 'n2' && e.msg === 'echo node started' && (e.vc?.n2 ?? 0) > 1);
      assert.equal(firstAfter.vc?.n2, vcBefore + 1);
      const sendsAfter = cluster.events().filter((e) => e.node === 'n2' && e.kind === 'send' && Number(e.id) > Number(firstAfter.id));
      assert.ok(sendsAfter.every((e) => e.msgId?.startsWith('n2#1:')));
    });

    it('records a crash in system code as an error event and a non-zero exit', async () => {
      const exited = waitForEvent(cluster, (e) => e.node === 'n3' && e.kind === 'proc' && e.msg === 'exit');
      client.request('n3', 'crash', {}, REPLY_MS).catch(() => undefined);
      assert.equal((await exited).fields?.code, 1);
      const crash = cluster.events().find((e) => e.node === 'n3' && e.kind === 'log' && e.level === 'error' && e.msg?.startsWith('uncaught exception'));
      assert.equal(crash?.msg, 'uncaught exception: crash requested by the test');
      assert.equal(crash?.src?.file, 'echo.mjs');
      const n3 = cluster.nodes().find((n) => n.id === 'n3');
      assert.equal(n3?.status, 'exited');
      assert.equal(n3?.exitCode, 1);
    });

    it('rejects clashing client names', async () => {
      await assert.rejects(cluster.client('c1'), /a client named c1 is already open/);
      await assert.rejects(cluster.client('n1'), /client name n1 is a node id/);
      await assert.rejects(cluster.client('router'), /reserved/);
    });

    it('stops without leaving a process, a listening port or a registry file', async () => {
      const pids = cluster.nodes().flatMap((n) => (n.pid === undefined ? [] : [n.pid]));
      const ports = cluster.nodes().flatMap((n) => (n.statePort === undefined ? [] : [n.statePort]));
      const routerPort = Number(cluster.events().find((e) => e.msg === 'router listening')?.fields?.port);
      assert.equal(pids.length, 2);
      await cluster.stop();
      for (const pid of pids) assert.throws(() => process.kill(pid, 0), /ESRCH/);
      for (const port of [...ports, routerPort]) assert.equal(await isListening(port), false, `port ${port}`);
      assert.deepEqual(cluster.nodes().map((n) => n.status), ['stopped', 'stopped', 'exited']);
      assert.equal(registryFileFor(registryDir(), runDir), undefined);
      const lines = fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n');
      assert.equal(lines.length, cluster.events().length);
      for (const line of lines) Event.parse(JSON.parse(line));
      assert.deepEqual(lines.map((l) => (JSON.parse(l) as { id: string }).id), cluster.events().map((e) => e.id));
      assert.deepEqual(cluster.events().filter((e) => e.node === 'router' && e.kind === 'log'), [], 'the router had nothing to complain about');
      // router.jsonl received every message any endpoint sent, and delivered the ones that arrived.
      const records = fs.readFileSync(path.join(runDir, 'router.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { action: string; msgId: string });
      const seen = (action: string): Set<string> => new Set(records.filter((r) => r.action === action).map((r) => r.msgId));
      const [received, delivered] = [seen('recv'), seen('deliver')];
      for (const e of cluster.events()) {
        if (e.kind === 'send') assert.ok(received.has(e.msgId ?? ''), `router saw ${e.msgId}`);
        if (e.kind === 'recv') assert.ok(delivered.has(e.msgId ?? ''), `router delivered ${e.msgId}`);
      }
    });
  });

  describe('failures and isolation', () => {
    it("counts a hello that comes before the backend's launch returned (a container can connect before it is inspected)", async () => {
      /** A backend whose launch returns only once the node has said hello, as a slow container inspection does. */
      class SlowLaunchCluster extends ProcessCluster {
        private seenRouter?: Router;
        protected override async routerListening(router: Router): Promise<void> {
          this.seenRouter = router;
          await super.routerListening(router);
        }
        protected override async launch(...args: Parameters<ProcessCluster['launch']>): ReturnType<ProcessCluster['launch']> {
          const [slot] = args;
          const router = this.seenRouter;
          assert.ok(router !== undefined);
          const hello = new Promise<void>((resolve) => {
            const off = router.onHello((info) => {
              if (info.node === slot.id) {
                off();
                resolve();
              }
            });
          });
          const node = await super.launch(...args);
          await hello;
          return node;
        }
      }
      const cluster = new SlowLaunchCluster({ sourceDir: echoDir, entry: 'echo.mjs', nodes: ['n1'], config: { greeting: 'hi' }, runDir: newRunDir(), seed: 5, startTimeoutMs: 5_000 });
      try {
        await cluster.start();
        assert.equal(cluster.nodes()[0]?.status, 'running');
        await cluster.kill('n1');
        await cluster.restart('n1');
        assert.equal(cluster.nodes()[0]?.status, 'running');
      } finally {
        await cluster.stop();
      }
    });

    const runDirs: string[] = [];
    const newRunDir = (): string => {
      const dir = tempRunDir();
      runDirs.push(dir);
      return dir;
    };
    after(() => {
      for (const dir of runDirs) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('fails start with the nodes that did not connect, leaving nothing behind', async () => {
      const cluster = createCluster({ sourceDir: path.join(fixtures, 'hanging-system'), entry: 'hang.mjs', nodes: ['h1', 'h2'], config: {}, runDir: newRunDir(), seed: 1, startTimeoutMs: 1_500 });
      await assert.rejects(cluster.start(), /nodes did not connect to the router within 1500 ms: h1, h2/);
      const pids = cluster.events().filter((e) => e.kind === 'proc' && e.msg === 'start').map((e) => Number(e.fields?.pid));
      assert.equal(pids.length, 2);
      for (const pid of pids) assert.ok(isGone(pid));
      await cluster.stop();
    });

    it('fails start with the node\'s own error when its system cannot load', async () => {
      const cluster = echoCluster(newRunDir(), ['n1'], { entry: 'missing.mjs' });
      await assert.rejects(cluster.start(), /node n1 exited before connecting to the router \(code 1; its last stderr lines:[\s\S]*missing\.mjs/);
    });

    it('runs clusters side by side without interference', async () => {
      const a = echoCluster(newRunDir(), ['n1', 'n2']);
      const b = echoCluster(newRunDir(), ['n1', 'n2']);
      try {
        await Promise.all([a.start(), b.start()]);
        a.partition([['n1'], ['c', 'n2']]);
        const [ca, cb] = await Promise.all([a.client('c'), b.client('c')]);
        await assert.rejects(ca.request('n2', 'relay', { via: 'n1' }, 500), /no reply/);
        assert.equal(field(await cb.request('n2', 'relay', { via: 'n1' }, REPLY_MS), 'by'), 'n1');
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    });

    it('gives each node an inspector port when asked', async () => {
      const cluster = echoCluster(newRunDir(), ['n1'], { inspect: true });
      try {
        await cluster.start();
        const port = cluster.nodes()[0]?.inspectPort;
        assert.ok(port !== undefined);
        const targets = await new Promise<string>((resolve, reject) => {
          http.get({ host: '127.0.0.1', port, path: '/json/list', agent: false }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => resolve(text));
          }).on('error', reject);
        });
        assert.match(targets, /webSocketDebuggerUrl/);
        assert.ok(!cluster.events().some((e) => e.level === 'error'), 'inspector notices are not errors');
      } finally {
        await cluster.stop();
      }
    });

    /** Starts the dying-harness fixture; resolves with it and its nodes' pids (n2 paused). */
    async function startHarness(runDir: string, isolation?: string): Promise<{ harness: ChildProcessByStdio<null, Readable, null>; pids: number[] }> {
      const harness = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(fixtures, 'dying-harness.ts'), runDir], {
        cwd: path.resolve(__dirname, '..', '..'),
        env: { ...process.env, ...(isolation !== undefined && { DDBENCH_ISOLATION: isolation }) },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const pids = await new Promise<number[]>((resolve, reject) => {
        let out = '';
        harness.stdout.setEncoding('utf8');
        harness.stdout.on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('\n')) resolve((JSON.parse(out.split('\n')[0] ?? '') as { pids: number[] }).pids);
        });
        harness.once('exit', (code) => reject(new Error(`harness exited early with ${code}`)));
      });
      assert.equal(pids.length, 2);
      return { harness, pids };
    }

    it('kills its nodes when the harness gets SIGTERM', async () => {
      const runDir = newRunDir();
      const { harness, pids } = await startHarness(runDir);
      const exited = new Promise((resolve) => harness.once('exit', (_code, signal) => resolve(signal)));
      harness.kill('SIGTERM');
      // The hook re-raises the signal, so the harness still dies of it.
      assert.equal(await exited, 'SIGTERM');
      // The paused n2 cannot exit by itself: only the harness's hook can have killed it.
      for (const pid of pids) await waitUntilGone(pid);
      assert.equal(registryFileFor(registryDir(), runDir), undefined);
    });

    it('under bubblewrap, even a paused node dies with its harness when the harness is SIGKILLed', async function () {
      if (bwrapProgram() === undefined) this.skip();
      const { harness, pids } = await startHarness(newRunDir(), 'bwrap');
      harness.kill('SIGKILL');
      await new Promise((resolve) => harness.once('exit', resolve));
      // No reaper ran: the sandbox ends with its parent, and its PID namespace with it.
      for (const pid of pids) await waitUntilGone(pid);
    });

    it('without a sandbox, reaps the nodes of a harness that was killed', async () => {
      const runDir = newRunDir();
      // Outside a sandbox nothing ends the nodes when their harness dies; the next run's reaper does.
      const { harness, pids } = await startHarness(runDir, 'none');
      const registryFile = registryFileFor(registryDir(), runDir);
      assert.ok(registryFile !== undefined, 'the harness registered its run');
      harness.kill('SIGKILL');
      await new Promise((resolve) => harness.once('exit', resolve));
      const paused = pids[1] ?? 0;
      assert.equal(processState(paused), 'T', 'the paused node outlived its harness');
      const report = reapLeftovers();
      assert.ok(report.killed.includes(paused));
      assert.ok(report.files.some((f) => f.endsWith(registryFile)));
      for (const pid of pids) await waitUntilGone(pid);
      assert.ok(!fs.existsSync(path.join(registryDir(), registryFile)));
    });
  });
});
