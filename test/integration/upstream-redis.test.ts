import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { SystemEntry } from '../../src/core/bugs/catalog';
import { createSystemCluster } from '../../src/core/cluster';
import { buildUpstream } from '../../src/core/cluster/upstream/build';
import { RedisErrorReply, redisRequest } from '../../src/core/cluster/upstream/redis-request';
import type { UpstreamCluster } from '../../src/core/cluster/upstream/upstream-cluster';
import type { Cluster, ClusterClient } from '../../src/core/cluster/types';
import type { Json } from '../../src/runtime/types';
import { assertNothingLeft, obj, until, upstreamScratch } from '../support/upstream';

/**
 * The real redis-server 7.0 from Debian's source package (bug kind `upstream`): built with
 * make in a work tree (a rebuild after an edit compiles only what changed), five servers
 * formed into a Redis Cluster through RESP client operations in the run's own network
 * namespace, their text logs on the timeline, faults on the real processes. CI installs
 * and builds it first (`ddbench setup upstream`); elsewhere the suite is skipped, saying
 * why, until that has run.
 */
describe('Redis requests over RESP', () => {
  it('sends a command to a scripted server and takes its reply, an error reply, a reply in pieces, a close and a timeout', async () => {
    const seen: string[] = [];
    const server = net.createServer((sock) => {
      let buf = Buffer.alloc(0);
      sock.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        const words = [...buf.toString().matchAll(/\$\d+\r\n([^\r]*)\r\n/g)].map((m) => m[1] as string);
        const n = Number(/^\*(\d+)\r\n/.exec(buf.toString())?.[1] ?? -1);
        if (words.length !== n) return;
        seen.push(words.join(' '));
        if (words[0] === 'PING') sock.write('+PONG\r\n');
        else if (words[0] === 'GET') sock.write('-MOVED 866 10.1.0.4:6379\r\n');
        else if (words[0] === 'CLUSTER') {
          sock.write('$12\r\ncluster_st');
          setTimeout(() => sock.write('at\r\n'), 20);
        } else if (words[0] === 'QUIT') sock.end();
        // SLOW: never answers
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const req = (command: string[], timeoutMs = 2000) => redisRequest({ host: '127.0.0.1', port, command, timeoutMs });
      assert.equal(await req(['PING']), 'PONG');
      assert.deepEqual(await req(['GET', 'k']), new RedisErrorReply('MOVED 866 10.1.0.4:6379'));
      assert.equal(await req(['CLUSTER', 'INFO']), 'cluster_stat');
      await assert.rejects(req(['QUIT']), /closed the connection/);
      await assert.rejects(req(['SLOW'], 200), (err: Error) => err.name === 'TimeoutError');
      assert.deepEqual(seen, ['PING', 'GET k', 'CLUSTER INFO', 'QUIT', 'SLOW']);
    } finally {
      server.close();
    }
  });
});

describe('upstream Redis (real binaries)', function () {
  this.timeout(600_000);
  let system: SystemEntry | undefined;
  let tmp: string;

  before(async function () {
    ({ system, tmp } = await upstreamScratch(this, 'redis'));
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('builds the pristine source from the cache, and an edited one in the work tree without starting over', async () => {
    const s = system as SystemEntry;
    const spec = s.manifest.upstream!;
    const pristine = await buildUpstream(s.id, spec, spec.tree);
    const copy = await buildUpstream(s.id, spec, path.join(tmp, 'src'));
    assert.equal(copy.hash, pristine.hash);
    assert.ok(copy.cached);
    const edited = path.join(tmp, 'edited');
    fs.cpSync(path.join(tmp, 'src'), edited, { recursive: true });
    fs.appendFileSync(path.join(edited, 'src', 'cluster.c'), `\n/* ddbench ${Date.now()} */\n`);
    const rebuilt = await buildUpstream(s.id, spec, edited);
    assert.equal(rebuilt.cached, false);
    assert.notEqual(rebuilt.hash, pristine.hash);
    assert.ok(fs.existsSync(rebuilt.binary));
    // A cold build takes 25 s and more; an edit of one file recompiles it and links.
    assert.ok(rebuilt.durationMs < 20_000, `a rebuild took ${rebuilt.durationMs} ms`);
    fs.rmSync(rebuilt.dir, { recursive: true, force: true });
    fs.rmSync(edited, { recursive: true, force: true });
  });

  it('runs a Redis Cluster of five: formed through RESP commands, text logs as events, a stalled master replaced, a kill and restart, and leaves nothing behind', async () => {
    const s = system as SystemEntry;
    const runDir = path.join(tmp, 'run');
    const cluster: Cluster = createSystemCluster(s, { sourceDir: tmp, nodes: s.manifest.nodes, config: {}, runDir, seed: 1 });
    let netns: string | undefined;
    try {
      await cluster.start();
      netns = (cluster as UpstreamCluster).networkName;
      const client: ClusterClient = await cluster.client('c1');
      const cmd = async (node: string, type: string, body: Record<string, Json> = {}) => obj(await client.request(node, type, body, 3_000));
      const ok = async (node: string, type: string, body: Record<string, Json> = {}) => {
        const r = await cmd(node, type, body);
        assert.equal(r.status, 200, `${type} on ${node}: ${JSON.stringify(r)}`);
        return r.data;
      };
      const ids: Record<string, string> = {};
      for (const n of s.manifest.nodes) ids[n] = String(await ok(n, 'ClusterMyId'));
      for (const n of s.manifest.nodes.slice(1)) assert.equal(await ok('n1', 'ClusterMeet', { peer: n }), 'OK');
      await until('every node to know every other', async () => {
        const views = await Promise.all(s.manifest.nodes.map(async (n) => String(await ok(n, 'ClusterNodes')).trim().split('\n')));
        return views.every((v) => v.length === 5 && v.every((l) => !l.includes('handshake') && l.includes('connected'))) ? true : undefined;
      });
      await ok('n1', 'ClusterAddSlotsRange', { from: 0, to: 5460 });
      await ok('n2', 'ClusterAddSlotsRange', { from: 5461, to: 10922 });
      await ok('n3', 'ClusterAddSlotsRange', { from: 10923, to: 16383 });
      for (const n of ['n4', 'n5']) await until(`${n} to follow n1`, async () => ((await cmd(n, 'ClusterReplicate', { nodeId: ids.n1! })).status === 200 ? true : undefined));
      await until('the cluster to be ok', async () => {
        const states = await Promise.all(s.manifest.nodes.map(async (n) => /cluster_state:ok/.test(String(await ok(n, 'ClusterInfo')))));
        return states.every(Boolean) ? true : undefined;
      });

      // "a" hashes to slot 15495 (n3's), "b" to 3300 (n1's).
      assert.equal(await ok('n3', 'Set', { key: 'a', value: '1' }), 'OK');
      assert.equal(await ok('n3', 'Get', { key: 'a' }), '1');
      assert.equal(await ok('n3', 'Get', { key: 'nothing-here-{a}' }), null);
      const moved = await cmd('n1', 'Get', { key: 'a' });
      assert.equal(moved.status, 400);
      assert.match(String(moved.error), /^MOVED 15495 /);
      assert.equal(await ok('n1', 'Set', { key: 'b', value: '2' }), 'OK');
      assert.deepEqual(await ok('n2', 'Command', { words: ['CLUSTER', 'KEYSLOT', 'b'] }), 3300);
      await until('both replicas of n1 to hold b', async () => {
        const roles = await Promise.all(['n4', 'n5'].map(async (n) => (await ok(n, 'Role')) as Json[]));
        return roles.every((r) => r[0] === 'slave' && r[3] === 'connected') ? true : undefined;
      });

      // redis-server's text lines are log events of each node.
      const logs = cluster.events().filter((e) => e.kind === 'log' && typeof e.fields?.redisTs === 'string');
      for (const n of s.manifest.nodes) assert.ok(logs.some((e) => e.node === n), `no redis log events from ${n}`);
      assert.ok(logs.some((e) => /Cluster state changed: ok/.test(e.msg ?? '')), 'no cluster state line');

      // A stalled master: one of its replicas takes over.
      await cluster.pause('n1');
      const next = await until(
        'a replica of n1 to take over',
        async () => {
          for (const n of ['n4', 'n5']) if (((await ok(n, 'Role')) as Json[])[0] === 'master') return n;
          return undefined;
        },
        20_000,
      );
      assert.equal(await ok(next, 'Get', { key: 'b' }), '2');
      assert.ok(cluster.events().some((e) => e.node === next && /Failover election won/.test(e.msg ?? '')), 'no election line');
      await cluster.resume('n1');
      await until('n1 to follow the new master', async () => (((await ok('n1', 'Role')) as Json[])[0] === 'slave' ? true : undefined));

      await cluster.kill('n2');
      assert.equal(cluster.nodes().find((n) => n.id === 'n2')?.status, 'stopped');
      await cluster.restart('n2');
      await until('n2 to serve its slots again', async () => ((await cmd('n2', 'Set', { key: 'c', value: '3' })).status === 200 ? true : undefined));
      const state = obj(await cluster.state('n2'));
      assert.equal(state.status, 'running');
      assert.match(String(obj(state.state)['CLUSTER INFO']), /cluster_known_nodes:5/);
      assert.equal((obj(state.state).ROLE as Json[])[0], 'master');

      const kinds = cluster.events().filter((e) => e.node === 'harness' || e.kind === 'proc').map((e) => e.msg);
      for (const m of ['build', 'network ready', 'pause', 'resume', 'kill', 'restart']) assert.ok(kinds.includes(m), `no ${m} event`);
    } finally {
      await cluster.stop();
    }
    assertNothingLeft(cluster, runDir, netns);
  });
});
