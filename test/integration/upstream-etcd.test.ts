import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SystemEntry } from '../../src/core/bugs/catalog';
import { createSystemCluster } from '../../src/core/cluster';
import { BuildFailed, buildUpstream } from '../../src/core/cluster/upstream/build';
import type { UpstreamCluster } from '../../src/core/cluster/upstream/upstream-cluster';
import type { Cluster, ClusterClient } from '../../src/core/cluster/types';
import { runScenarioTrials } from '../../src/core/repro/trials';
import type { Json } from '../../src/runtime/types';
import { assertNothingLeft, obj, until, upstreamScratch } from '../support/upstream';

/**
 * The real etcd 3.4 from Debian's sources (bug kind `upstream`): built in the sandbox,
 * three members in the run's own network namespace, faults on the real processes and
 * connections. CI installs and builds it first (`ddbench setup upstream`); elsewhere the
 * suite is skipped, saying why, until that has run.
 */
const b64 = (s: string) => Buffer.from(s).toString('base64');

async function status(client: ClusterClient, node: string): Promise<{ leader: string; term: string } | undefined> {
  try {
    const body = obj(obj(await client.request(node, 'Status', {}, 2_000)).body);
    const header = obj(body.header);
    return { leader: String(body.leader ?? ''), term: String(header.raft_term ?? '') };
  } catch {
    return undefined;
  }
}

/** The member id → node map, from each node's own Status (its header's member_id). */
async function members(client: ClusterClient, nodes: readonly string[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const n of nodes) {
    const r = await until(`${n}'s status`, async () => {
      try {
        return obj(obj(obj(await client.request(n, 'Status', {}, 2_000)).body).header);
      } catch {
        return undefined;
      }
    });
    ids.set(String(r.member_id), n);
  }
  return ids;
}

describe('upstream etcd (real binaries)', function () {
  this.timeout(600_000);
  let system: SystemEntry | undefined;
  let tmp: string;

  before(async function () {
    ({ system, tmp } = await upstreamScratch(this, 'etcd'));
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('builds the source once per content, and reports a compile error as the compiler wrote it', async () => {
    const s = system as SystemEntry;
    const first = await buildUpstream(s.id, s.manifest.upstream!, path.join(tmp, 'src'));
    const again = await buildUpstream(s.id, s.manifest.upstream!, path.join(tmp, 'src'));
    assert.equal(again.cached, true);
    assert.equal(again.binary, first.binary);
    const broken = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-upstream-broken-'));
    try {
      fs.cpSync(path.join(tmp, 'src'), broken, { recursive: true });
      fs.appendFileSync(path.join(broken, 'raft', 'raft.go'), '\nfunc broken( {\n');
      await assert.rejects(buildUpstream(s.id, s.manifest.upstream!, broken), (err: unknown) => {
        assert.ok(err instanceof BuildFailed, String(err));
        assert.match(err.output, /raft\/raft\.go:\d+/);
        return true;
      });
    } finally {
      fs.rmSync(broken, { recursive: true, force: true });
    }
  });

  it('runs three members: writes and reads through the gateway, survives a partition of the leader, a kill and a pause, and leaves nothing behind', async () => {
    const s = system as SystemEntry;
    const runDir = path.join(tmp, 'run');
    const cluster: Cluster = createSystemCluster(s, { sourceDir: tmp, nodes: s.manifest.nodes, config: {}, runDir, seed: 1 });
    let netns: string | undefined;
    try {
      await cluster.start();
      netns = (cluster as UpstreamCluster).networkName;
      const client = await cluster.client('c1');
      const put = obj(await client.request('n1', 'Put', { key: b64('k'), value: b64('v1') }, 10_000));
      assert.equal(put.status, 200, JSON.stringify(put));
      const read = obj(await client.request('n2', 'Range', { key: b64('k') }, 10_000));
      const kvs = obj(read.body).kvs as Json[];
      assert.equal(Buffer.from(String(obj(kvs[0]).value), 'base64').toString(), 'v1');

      // etcd logs through zap: its lines are log events with the Go caller as their source.
      const zap = cluster.events().filter((e) => e.kind === 'log' && e.src?.file.endsWith('.go'));
      assert.ok(zap.length > 0, 'no zap log events');
      for (const n of s.manifest.nodes) assert.ok(zap.some((e) => e.node === n), `no zap events from ${n}`);

      const ids = await members(client, s.manifest.nodes);
      const leaderOf = async (n: string) => {
        const st = await status(client, n);
        return st && st.leader !== '0' ? ids.get(st.leader) : undefined;
      };
      const leader = await until('a leader', () => leaderOf('n1'));
      const rest = s.manifest.nodes.filter((n) => n !== leader);
      cluster.partition([[leader], rest]);
      await (cluster as UpstreamCluster).settled();
      const next = await until('a leader among the majority', async () => {
        const l = await leaderOf(rest[0]!);
        return l !== undefined && l !== leader ? l : undefined;
      });
      assert.ok(rest.includes(next));
      // The cut is between members only: the harness still reaches the isolated one.
      assert.ok((await status(client, leader)) !== undefined);
      cluster.heal();
      await (cluster as UpstreamCluster).settled();
      await until(`${leader} rejoining`, async () => ((await leaderOf(leader)) === next ? true : undefined));

      const follower = rest.find((n) => n !== next)!;
      await cluster.kill(follower);
      assert.equal(cluster.nodes().find((n) => n.id === follower)?.status, 'stopped');
      await cluster.restart(follower);
      const after = obj(await client.request(follower, 'Range', { key: b64('k') }, 10_000));
      assert.equal(after.status, 200);

      await cluster.pause(next);
      await until('a leader after the pause', async () => {
        const l = await leaderOf(follower);
        return l !== undefined && l !== next ? l : undefined;
      });
      await cluster.resume(next);

      const kinds = cluster.events().filter((e) => e.node === 'harness' || e.kind === 'proc').map((e) => e.msg);
      for (const m of ['build', 'network ready', 'partition', 'heal', 'kill', 'restart', 'pause', 'resume']) assert.ok(kinds.includes(m), `no ${m} event`);
    } finally {
      await cluster.stop();
    }
    assertNothingLeft(cluster, runDir, netns);
    assert.ok(fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').includes('"cluster stopped"'));
  });

  it('runs a scenario on it through the trial runner, and fails every trial of code that does not build on "the code builds"', async () => {
    const s = system as SystemEntry;
    // The system's manifest beside a scenario of this test's own.
    const sysDir = path.join(tmp, 'system');
    fs.mkdirSync(path.join(sysDir, 'scenarios'), { recursive: true });
    fs.copyFileSync(path.join(s.dir, 'system.json'), path.join(sysDir, 'system.json'));
    fs.writeFileSync(
      path.join(sysDir, 'scenarios', 'write-read.mjs'),
      `const b64 = (s) => Buffer.from(s).toString('base64');
export default {
  name: 'write-read',
  description: 'a write through one member is read back through another, after a member restarts',
  timeoutMs: 60000,
  async run(t) {
    const c = await t.client('c1');
    const put = await c.request('n1', 'Put', { key: b64('a'), value: b64('1') }, 10000);
    t.check('the write is acknowledged', put.status === 200, { put });
    await t.kill('n3');
    await t.restart('n3');
    const got = await t.until(async () => {
      const r = await c.request('n3', 'Range', { key: b64('a') }, 5000).catch(() => undefined);
      return r && r.status === 200 && r.body.kvs ? r : undefined;
    }, { timeoutMs: 20000, description: 'n3 serves the write' });
    t.check('the write is read back', Buffer.from(got.body.kvs[0].value, 'base64').toString() === '1', { got });
  },
};
`,
    );
    const local: SystemEntry = { ...s, dir: sysDir };
    const ok = await runScenarioTrials(local, tmp, 'write-read', path.join(tmp, 'runs-ok'), { trials: 1, concurrency: 1 });
    assert.equal(ok.passed, 1, JSON.stringify(ok.trials));
    const broken = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-upstream-broken-'));
    try {
      fs.cpSync(path.join(tmp, 'src'), path.join(broken, 'src'), { recursive: true });
      fs.appendFileSync(path.join(broken, 'src', 'etcdserver', 'server.go'), '\nvar x int = "not an int"\n');
      const r = await runScenarioTrials(local, broken, 'write-read', path.join(broken, 'runs'), { trials: 3, concurrency: 1 });
      assert.equal(r.failed, 3);
      for (const t of r.trials) {
        assert.equal(t.verdict, 'fail');
        assert.equal(t.violation?.check, 'the code builds');
        assert.match(String(t.violation?.details.output), /etcdserver\/server\.go:\d+:\d+: cannot use "not an int"/);
      }
    } finally {
      fs.rmSync(broken, { recursive: true, force: true });
    }
  });
});
