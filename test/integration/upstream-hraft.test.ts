import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { SystemEntry } from '../../src/core/bugs/catalog';
import { createSystemCluster } from '../../src/core/cluster';
import type { UpstreamCluster } from '../../src/core/cluster/upstream/upstream-cluster';
import type { Cluster, ClusterClient } from '../../src/core/cluster/types';
import { assertNothingLeft, obj, until, upstreamScratch } from '../support/upstream';

/**
 * The real hashicorp/raft 1.1 from Debian's Go sources, run by the system's own host
 * program (src/cmd/raftkv): four servers (three voters, a non-voter) in the run's own
 * network namespace, writes and reads over JSON HTTP, hclog's JSON lines on the
 * timeline with their Go source, and faults on the real processes and connections. CI
 * installs and builds it first (`ddbench setup upstream`); elsewhere the live part is
 * skipped, saying why, until that has run.
 */
describe('upstream hashicorp/raft (real library, raftkv host)', function () {
  this.timeout(600_000);
  let system: SystemEntry | undefined;
  let tmp: string;

  before(async function () {
    ({ system, tmp } = await upstreamScratch(this, 'hraft'));
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('builds the library with its host, runs three voters and a non-voter: writes, hclog events, a pause, a partition, a kill and restart with state kept, and leaves nothing behind', async () => {
    const s = system as SystemEntry;
    assert.ok(fs.existsSync(path.join(tmp, 'src', 'cmd', 'raftkv', 'main.go')), 'the host program is not in src/');
    const runDir = path.join(tmp, 'run');
    const cluster: Cluster = createSystemCluster(s, { sourceDir: tmp, nodes: s.manifest.nodes, config: {}, runDir, seed: 1 });
    let netns: string | undefined;
    try {
      await cluster.start();
      netns = (cluster as UpstreamCluster).networkName;
      const client: ClusterClient = await cluster.client('c1');
      const status = async (n: string) => obj(obj(await client.request(n, 'Status', {}, 3_000)).body);
      const address = new Map<string, string>();
      for (const n of s.manifest.nodes) address.set(String((await until(`${n}'s status`, () => status(n))).address), n);
      const leaderAmong = (nodes: string[]) =>
        until(`a leader among ${nodes.join(', ')}`, async () => {
          for (const n of nodes) if ((await status(n)).state === 'Leader') return n;
          return undefined;
        });
      const put = (nodes: string[], key: string, value: string) =>
        until(`${key}=${value} to be acknowledged`, async () => {
          for (const n of nodes) {
            const r = obj(await client.request(n, 'Put', { key, value }, 8_000));
            if (r.status === 200) return Number(obj(r.body).index);
          }
          return undefined;
        });
      const local = async (n: string, key: string) => obj(obj(await client.request(n, 'LocalGet', { key }, 3_000)).body).value;

      const first = await leaderAmong(['n1', 'n2', 'n3']);
      assert.ok((await put([first], 'a', '1')) > 0);
      const refused = obj(await client.request(first === 'n1' ? 'n2' : 'n1', 'Put', { key: 'a', value: 'x' }, 3_000));
      assert.equal(refused.status, 409);
      assert.equal(address.get(String(obj(refused.body).leader)), first);
      await until('the non-voter to apply the write', async () => ((await local('n4', 'a')) === '1' ? true : undefined));
      assert.equal((await status('n4')).state, 'Follower');

      // hclog's JSON lines are log events of each node, with the library's source files.
      const logs = cluster.events().filter((e) => e.kind === 'log' && typeof e.fields?.hclogTs === 'string');
      for (const n of s.manifest.nodes) assert.ok(logs.some((e) => e.node === n), `no hclog events from ${n}`);
      assert.ok(logs.some((e) => e.src?.file === 'github.com/hashicorp/raft/raft.go'), 'no events with raft.go as their source');

      // A paused leader is replaced; resumed, it follows.
      await cluster.pause(first);
      const voters = ['n1', 'n2', 'n3'];
      const second = await leaderAmong(voters.filter((n) => n !== first));
      assert.ok((await put([second], 'b', '2')) > 0);
      await cluster.resume(first);

      // A partition cuts a voter off; the others go on.
      const cut = voters.find((n) => n !== second)!;
      cluster.partition([[cut], s.manifest.nodes.filter((n) => n !== cut)]);
      await (cluster as UpstreamCluster).settled();
      const third = await leaderAmong(voters.filter((n) => n !== cut));
      assert.ok((await put([third], 'c', '3')) > 0);
      cluster.heal();
      await (cluster as UpstreamCluster).settled();

      // The non-voter is killed and restarted: it keeps its log and catches up.
      await cluster.kill('n4');
      assert.equal(cluster.nodes().find((n) => n.id === 'n4')?.status, 'stopped');
      const leader = await leaderAmong(voters);
      assert.ok((await put([leader], 'd', '4')) > 0);
      await cluster.restart('n4');
      for (const n of s.manifest.nodes) {
        await until(`${n} to apply every write`, async () => {
          const got = await Promise.all(['a', 'b', 'c', 'd'].map((k) => local(n, k)));
          return got.join(',') === '1,2,3,4' ? true : undefined;
        });
      }
      const state = obj(await cluster.state(leader));
      assert.equal(state.status, 'running');
      assert.equal(obj(state.state).state, 'Leader', JSON.stringify(state).slice(0, 300));

      const kinds = cluster.events().filter((e) => e.node === 'harness' || e.kind === 'proc').map((e) => e.msg);
      for (const m of ['build', 'network ready', 'pause', 'resume', 'partition', 'heal', 'kill', 'restart']) assert.ok(kinds.includes(m), `no ${m} event`);
    } finally {
      await cluster.stop();
    }
    assertNothingLeft(cluster, runDir, netns);
  });
});
