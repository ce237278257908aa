import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bugSystem, findBug, loadCatalog, miniatureEntry, type BugEntry } from '../../src/core/bugs/catalog';
import { BugManifest, SystemManifest } from '../../src/core/bugs/manifest';
import { requireInstalled, upstreamMissing } from '../../src/core/bugs/upstream-installed';
import { openWorkspace } from '../../src/core/bugs/workspace';
import { packagesFor } from '../../src/core/cluster/upstream/setup';
import { hashTree } from '../../src/core/cluster/upstream/source-hash';
import { zapEvent } from '../../src/core/events/formats/zap';

describe('upstream systems', () => {
  let tmp: string;
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-upstream-unit-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('loads the bug set’s real systems beside its miniatures, each bug with its kind', async () => {
    const catalog = await loadCatalog();
    assert.deepEqual(catalog.problems, []);
    const etcd = catalog.systems.find((s) => s.id === 'etcd');
    assert.equal(etcd?.kind, 'upstream');
    assert.equal(etcd?.manifest.upstream?.debian.source.package, 'golang-etcd-server-dev');
    assert.throws(() => miniatureEntry(etcd!.manifest), /real upstream system: it runs live only/);
    assert.equal(findBug(catalog, 'etcd-revision-behind-compaction').kind, 'upstream');
    assert.equal(findBug(catalog, 'raftkv-no-leader-after-heal').kind, 'miniature');
    for (const b of catalog.bugs) assert.equal(b.kind, catalog.systems.find((s) => s.id === b.system)?.kind, b.id);
    assert.deepEqual(packagesFor([etcd!]), ['bubblewrap', 'golang-etcd-server-dev', 'golang-go', 'iproute2', 'iptables', 'util-linux']);
  });

  it('a real system sits under upstream/ and a miniature beside it: a misplaced one is a load problem, the rest still load', async () => {
    const set = path.join(tmp, 'bugs');
    const bugsDir = path.join(__dirname, '..', '..', 'bugs');
    fs.cpSync(path.join(bugsDir, 'upstream', 'etcd'), path.join(set, 'etcd'), { recursive: true });
    fs.cpSync(path.join(bugsDir, 'swimgossip'), path.join(set, 'upstream', 'swimgossip'), { recursive: true });
    fs.cpSync(path.join(bugsDir, 'upstream', 'etcd'), path.join(set, 'upstream', 'etcd'), { recursive: true });
    fs.rmSync(path.join(set, 'upstream', 'etcd', 'etcd-revision-behind-compaction'), { recursive: true });
    const catalog = await loadCatalog(set);
    assert.deepEqual(catalog.systems.map((s) => `${s.kind}:${s.id}`), ['upstream:etcd']);
    assert.equal(catalog.problems.length, 2, catalog.problems.join('\n'));
    assert.match(catalog.problems.join('\n'), /etcd[/]system\.json: upstream: a real upstream system belongs under upstream\//);
    assert.match(catalog.problems.join('\n'), /upstream[/]swimgossip[/]system\.json: upstream: a system under upstream\/ is a real upstream system and needs this field/);
    assert.throws(() => findBug(catalog, 'etcd-revision-behind-compaction'), /could not be loaded; fix its manifest: .*belongs under upstream/);
  });

  it('says what to install before a pilot bug runs, and refuses such a run up front', async () => {
    const set = path.join(tmp, 'bugs');
    fs.cpSync(path.join(__dirname, '..', '..', 'bugs', 'upstream', 'etcd'), path.join(set, 'upstream', 'etcd'), { recursive: true });
    const file = path.join(set, 'upstream', 'etcd', 'system.json');
    const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { upstream: { tree: string } };
    manifest.upstream.tree = path.join(tmp, 'not-installed');
    fs.writeFileSync(file, JSON.stringify(manifest));
    const catalog = await loadCatalog(set);
    const bug = findBug(catalog, 'etcd-revision-behind-compaction');
    assert.match(upstreamMissing(catalog.systems[0]!) ?? '', /^etcd 3\.4\.23 is not installed \(its source .*not-installed comes from golang-etcd-server-dev 3\.4\.23-4\): run `sudo ddbench setup upstream`$/);
    assert.throws(() => requireInstalled(catalog, [bug]), /etcd-revision-behind-compaction: etcd 3\.4\.23 is not installed[^]*--kind miniature/);
    await assert.rejects(openWorkspace(catalog, bug.id, path.join(tmp, 'ws')), /etcd 3\.4\.23 is not installed/);
    assert.ok(!fs.existsSync(path.join(tmp, 'ws', 'src')), 'nothing half-made');
  });

  it('a system gives entry or upstream, never both or neither', () => {
    const base = { id: 'x', name: 'X', description: 'd', modelledAfter: { project: 'p', url: 'https://example.com' }, nodes: ['n1'] };
    assert.equal(SystemManifest.safeParse(base).success, false);
    assert.equal(SystemManifest.safeParse({ ...base, entry: 'src/node.js' }).success, true);
    const etcd = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'bugs', 'upstream', 'etcd', 'system.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(SystemManifest.safeParse(etcd).success, true);
    const both = SystemManifest.safeParse({ ...etcd, entry: 'src/node.js' });
    assert.equal(both.success, false);
    assert.match(JSON.stringify(both.error?.issues), /give entry \(a miniature\) or upstream/);
    const escaping = SystemManifest.safeParse({ ...etcd, upstream: { ...(etcd.upstream as object), build: { ...((etcd.upstream as { build: object }).build), mount: '../etc' } } });
    assert.equal(escaping.success, false);
  });

  it('gives an upstream bug’s node flags to its system’s command line, and refuses them for a miniature', async () => {
    const catalog = await loadCatalog();
    const etcd = catalog.systems.find((s) => s.id === 'etcd')!;
    const base = etcd.manifest.upstream!.node.args;
    const pilot = catalog.bugs.filter((b) => b.system === 'etcd');
    for (const bug of pilot) {
      const args = bugSystem(etcd, bug).manifest.upstream!.node.args;
      assert.deepEqual(args, [...base, ...(bug.manifest.upstream?.args ?? [])], bug.id);
    }
    assert.ok(pilot.some((b) => (b.manifest.upstream?.args.length ?? 0) > 0), 'a pilot bug runs with flags of its own');
    assert.deepEqual(etcd.manifest.upstream!.node.args, base, 'the system itself is left as it was');
    const raw = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'bugs', 'upstream', 'etcd', 'etcd-revision-behind-compaction', 'bug.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(BugManifest.safeParse({ ...raw, upstream: { args: [] } }).success, false, 'an empty list of flags');
    assert.equal(BugManifest.safeParse({ ...raw, upstream: { args: ['--pre-vote'], env: {} } }).success, false, 'an unknown field');
    // A miniature bug with node flags does not load.
    const mini = catalog.bugs.find((b) => b.kind === 'miniature')!;
    const root = path.join(tmp, 'bugs');
    const sys = catalog.systems.find((s) => s.id === mini.system)!;
    fs.cpSync(sys.dir, path.join(root, sys.id), { recursive: true });
    const file = path.join(root, sys.id, mini.id, 'bug.json');
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), upstream: { args: ['--pre-vote'] } }));
    const loaded = await loadCatalog(root);
    assert.ok(!loaded.bugs.some((b) => b.id === mini.id));
    assert.match(loaded.problems.join('\n'), /upstream: node flags are for a bug of a real upstream system; .* is a miniature/);
  });

  it('pairs every twin: an upstream bug and a miniature that name each other and cite the same upstream issue or fix', async () => {
    const catalog = await loadCatalog();
    const all = new Map<string, { bug: BugEntry; upstream: boolean }>(catalog.bugs.map((bug) => [bug.id, { bug, upstream: bug.kind === 'upstream' }]));
    let pairs = 0;
    for (const { bug, upstream } of all.values()) {
      const twin = bug.manifest.twin;
      if (twin === undefined) continue;
      const other = all.get(twin);
      assert.ok(other, `${bug.id}: its twin ${twin} is not in the set`);
      assert.equal(other.bug.manifest.twin, bug.id, `${twin} does not name ${bug.id} as its twin`);
      assert.notEqual(other.upstream, upstream, `${bug.id} and ${twin} are of the same kind`);
      const a = bug.modelledAfter;
      const b = other.bug.modelledAfter;
      assert.ok(a.url === b.url || a.fix.url === b.fix.url, `${bug.id} and ${twin} cite different upstream issues and fixes`);
      if (upstream) pairs++;
    }
    assert.ok(pairs >= 1, 'the pilot tier has a twin');
  });

  it('hashes a source tree by its files’ paths, contents and executable bits', () => {
    fs.mkdirSync(path.join(tmp, 'a', 'b'), { recursive: true });
    fs.writeFileSync(path.join(tmp, 'a', 'b', 'x.go'), 'package b\n');
    fs.writeFileSync(path.join(tmp, 'a', 'main.go'), 'package main\n');
    const h1 = hashTree(tmp);
    assert.equal(hashTree(tmp), h1);
    fs.writeFileSync(path.join(tmp, 'a', 'b', 'x.go'), 'package b \n');
    const h2 = hashTree(tmp);
    assert.notEqual(h2, h1);
    fs.chmodSync(path.join(tmp, 'a', 'main.go'), 0o755);
    assert.notEqual(hashTree(tmp), h2);
    fs.renameSync(path.join(tmp, 'a', 'main.go'), path.join(tmp, 'a', 'main2.go'));
    fs.chmodSync(path.join(tmp, 'a', 'main2.go'), 0o644);
    assert.notEqual(hashTree(tmp), h2);
  });

  it('reads etcd’s zap JSON lines as log events with the Go caller as their source', () => {
    const line = '{"level":"warn","ts":"2026-12-02T15:00:00.123Z","caller":"raft/raft.go:923","msg":"lost leader","raft-id":"8e9e05c52164694d","term":4}';
    const e = zapEvent(line, 'n2', 1_500);
    assert.deepEqual(e, {
      ts: 1_500,
      node: 'n2',
      kind: 'log',
      level: 'warn',
      msg: 'lost leader',
      src: { file: 'raft/raft.go', line: 923 },
      fields: { 'raft-id': '8e9e05c52164694d', term: 4, zapTs: '2026-12-02T15:00:00.123Z' },
    });
    assert.equal(zapEvent('{"level":"fatal","msg":"x"}', 'n1', 0)?.level, 'error');
    assert.equal(zapEvent('2026-12-02 15:00:00 I | etcdmain: plain text', 'n1', 0), undefined);
    assert.equal(zapEvent('{"not":"zap"}', 'n1', 0), undefined);
    assert.equal(zapEvent('{broken', 'n1', 0), undefined);
  });
});
