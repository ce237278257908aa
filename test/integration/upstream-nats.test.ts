import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { SystemEntry } from '../../src/core/bugs/catalog';
import { createSystemCluster } from '../../src/core/cluster';
import { natsRequest } from '../../src/core/cluster/upstream/nats-request';
import type { UpstreamCluster } from '../../src/core/cluster/upstream/upstream-cluster';
import type { Cluster, ClusterClient } from '../../src/core/cluster/types';
import type { Json } from '../../src/runtime/types';
import { assertNothingLeft, obj, until, upstreamScratch } from '../support/upstream';

/**
 * The real nats-server 2.9 from Debian's source package (bug kind `upstream`): NATS
 * requests over the text protocol, three servers with JetStream clustering in the run's
 * own network namespace, their text logs on the timeline, faults on the real processes
 * and connections. CI installs and builds it first (`ddbench setup upstream`); elsewhere
 * the live part is skipped, saying why, until that has run.
 */
describe('NATS requests over the text protocol', () => {
  let server: net.Server;
  let port: number;
  const seen: string[] = [];

  before(async () => {
    // A scripted server: INFO, then an answer to each PUB or HPUB on its reply subject.
    server = net.createServer((sock) => {
      sock.write('INFO {"server_id":"x","headers":true}\r\n');
      let buf = '';
      sock.on('data', (d) => {
        buf += d.toString();
        for (;;) {
          const m = /^(?:CONNECT [^\r]*|SUB \S+ \d+)\r\n/.exec(buf) ?? /^(H?PUB) (\S+) (\S+) (?:(\d+) )?(\d+)\r\n/.exec(buf);
          if (m === null) return;
          if (m[1] === undefined) {
            seen.push(m[0].trim());
            buf = buf.slice(m[0].length);
            continue;
          }
          const total = Number(m[5]);
          if (buf.length < m[0].length + total + 2) return;
          const msg = buf.slice(m[0].length, m[0].length + total);
          buf = buf.slice(m[0].length + total + 2);
          seen.push(`${m[1]} ${m[2]} ${msg}`);
          const reply = m[3] as string;
          if (m[2] === 'nobody') sock.write(`HMSG ${reply} 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n`);
          else if (m[2] === 'bad') sock.write("-ERR 'Permissions Violation'\r\n");
          else sock.write(`PING\r\nMSG ${reply} 1  28\r\n{"stream":"ORDERS", "seq":7}\r\n`);
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  });

  after(() => server.close());

  it('publishes with headers and a reply inbox, answers PING, and reads the reply, a status and a protocol error', async () => {
    const r = await natsRequest({ host: '127.0.0.1', port, subject: 'orders.1', payload: Buffer.from('hi'), headers: { 'Nats-Msg-Id': 'a1' }, timeoutMs: 3_000 });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.data.toString()), { stream: 'ORDERS', seq: 7 });
    assert.ok(seen.some((l) => l.startsWith('CONNECT {') && l.includes('"headers":true')));
    assert.ok(seen.includes('HPUB orders.1 NATS/1.0\r\nNats-Msg-Id: a1\r\n\r\nhi'), seen.join('|'));
    const none = await natsRequest({ host: '127.0.0.1', port, subject: 'nobody', payload: Buffer.alloc(0), timeoutMs: 3_000 });
    assert.equal(none.status, 503);
    assert.equal(none.data.length, 0);
    await assert.rejects(natsRequest({ host: '127.0.0.1', port, subject: 'bad', payload: Buffer.alloc(0), timeoutMs: 3_000 }), /Permissions Violation/);
    await assert.rejects(natsRequest({ host: '127.0.0.1', port: 1, subject: 'x', payload: Buffer.alloc(0), timeoutMs: 3_000 }), /ECONNREFUSED/);
  });
});

describe('upstream NATS (real binaries)', function () {
  this.timeout(600_000);
  let system: SystemEntry | undefined;
  let tmp: string;

  before(async function () {
    ({ system, tmp } = await upstreamScratch(this, 'nats'));
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('runs three JetStream servers: a replicated stream through NATS requests, text logs as events, a partition, a kill and restart, and leaves nothing behind', async () => {
    const s = system as SystemEntry;
    const runDir = path.join(tmp, 'run');
    const cluster: Cluster = createSystemCluster(s, { sourceDir: tmp, nodes: s.manifest.nodes, config: {}, runDir, seed: 1 });
    let netns: string | undefined;
    try {
      await cluster.start();
      netns = (cluster as UpstreamCluster).networkName;
      const client: ClusterClient = await cluster.client('c1');
      const js = async (node: string, type: string, body: Record<string, Json>) => obj(obj(await client.request(node, type, body, 5_000)).data);
      await until('the stream to be created', async () => {
        const r = await js('n1', 'StreamCreate', { stream: 'T', payload: { name: 'T', subjects: ['t.>'], num_replicas: 3, storage: 'file' } });
        return r.error === undefined ? r : undefined;
      });
      const leaderOf = async (n: string) => {
        const l = (await js(n, 'StreamInfo', { stream: 'T' })).cluster;
        const name = obj(l).leader;
        return typeof name === 'string' && name !== '' ? name : undefined;
      };
      const publish = (nodes: string[], i: number) =>
        until(`publish ${i}`, async () => {
          for (const n of nodes) {
            const r = await js(n, 'Publish', { subject: `t.${i}`, payload: `m${i}`, headers: { 'Nats-Msg-Id': `m${i}` } }).catch(() => ({}) as Record<string, Json>);
            if (typeof r.seq === 'number') return r.seq;
          }
          return undefined;
        });
      assert.equal(await publish(['n1', 'n2', 'n3'], 1), 1);
      const got = await js('n2', 'MsgGet', { stream: 'T', payload: { seq: 1 } });
      assert.equal(Buffer.from(String(obj(got.message).data), 'base64').toString(), 'm1');
      const none = obj(await client.request('n1', 'Publish', { subject: 'nobody.listens', payload: 'x' }, 5_000));
      assert.equal(none.status, 503);

      // nats-server's text lines are log events of each node, Raft groups among their fields.
      const logs = cluster.events().filter((e) => e.kind === 'log' && typeof e.fields?.natsTs === 'string');
      for (const n of s.manifest.nodes) assert.ok(logs.some((e) => e.node === n), `no nats log events from ${n}`);
      assert.ok(logs.some((e) => typeof e.fields?.raftGroup === 'string'), 'no Raft lines');

      const leader = await until('a stream leader', () => leaderOf('n1'));
      const rest = s.manifest.nodes.filter((n) => n !== leader);
      cluster.partition([[leader], rest]);
      await (cluster as UpstreamCluster).settled();
      const next = await until('a stream leader among the majority', async () => {
        const l = await leaderOf(rest[0]!);
        return l !== undefined && l !== leader ? l : undefined;
      });
      assert.ok(rest.includes(next));
      assert.equal(await publish(rest, 2), 2);
      cluster.heal();
      await (cluster as UpstreamCluster).settled();

      const follower = rest.find((n) => n !== next)!;
      await cluster.kill(follower);
      assert.equal(cluster.nodes().find((n) => n.id === follower)?.status, 'stopped');
      assert.equal(await publish([next], 3), 3);
      await cluster.restart(follower);
      // Each server's own replica, from its monitoring port.
      for (const n of s.manifest.nodes) {
        await until(`${n} to hold 3 messages`, async () => {
          const jsz = obj(obj(await client.request(n, 'Jsz', {}, 3_000)).body);
          const streams = ((jsz.account_details as Json[] | undefined) ?? []).flatMap((a) => (obj(a).stream_detail as Json[] | undefined) ?? []);
          return streams.some((d) => obj(obj(d).state).last_seq === 3) ? true : undefined;
        });
      }
      const state = obj(await cluster.state(next));
      assert.equal(state.status, 'running');
      assert.ok(obj(state.state).streams !== undefined, JSON.stringify(state).slice(0, 300));

      const kinds = cluster.events().filter((e) => e.node === 'harness' || e.kind === 'proc').map((e) => e.msg);
      for (const m of ['build', 'network ready', 'partition', 'heal', 'kill', 'restart']) assert.ok(kinds.includes(m), `no ${m} event`);
    } finally {
      await cluster.stop();
    }
    assertNothingLeft(cluster, runDir, netns);
  });
});
