import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bugSystem, loadCatalog, loadUpstreamSet, loadUpstreamSystems, miniatureEntry, type BugEntry } from '../../src/core/bugs/catalog';
import { BugManifest, SystemManifest } from '../../src/core/bugs/manifest';
import { packagesFor } from '../../src/core/cluster/upstream/setup';
import { hashTree } from '../../src/core/cluster/upstream/source-hash';
import { zapEvent } from '../../src/core/events/formats/zap';

describe('upstream systems', () => {
  let tmp: string;
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-upstream-unit-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('loads the bug set’s real systems apart from its miniatures', async () => {
    const [etcd, ...rest] = await loadUpstreamSystems();
    assert.equal(rest.length, 0);
    assert.equal(etcd?.id, 'etcd');
    assert.equal(etcd?.manifest.upstream?.debian.source.package, 'golang-etcd-server-dev');
    assert.throws(() => miniatureEntry(etcd!.manifest), /real upstream system: it runs live only/);
    const catalog = await loadCatalog();
    assert.ok(!catalog.systems.some((s) => s.id === 'etcd'), 'the catalogue lists no upstream system until it has bugs');
    assert.deepEqual(catalog.problems, []);
    assert.deepEqual(packagesFor([etcd!]), ['bubblewrap', 'golang-etcd-server-dev', 'golang-go', 'iproute2', 'iptables', 'util-linux']);
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
    const set = await loadUpstreamSet();
    const etcd = set.systems.find((s) => s.id === 'etcd')!;
    const base = etcd.manifest.upstream!.node.args;
    for (const bug of set.bugs) {
      const args = bugSystem(etcd, bug).manifest.upstream!.node.args;
      assert.deepEqual(args, [...base, ...(bug.manifest.upstream?.args ?? [])], bug.id);
    }
    assert.ok(set.bugs.some((b) => (b.manifest.upstream?.args.length ?? 0) > 0), 'a pilot bug runs with flags of its own');
    assert.deepEqual(etcd.manifest.upstream!.node.args, base, 'the system itself is left as it was');
    const raw = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'bugs', 'upstream', 'etcd', 'etcd-revision-behind-compaction', 'bug.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(BugManifest.safeParse({ ...raw, upstream: { args: [] } }).success, false, 'an empty list of flags');
    assert.equal(BugManifest.safeParse({ ...raw, upstream: { args: ['--pre-vote'], env: {} } }).success, false, 'an unknown field');
    // A miniature bug with node flags does not load.
    const catalog = await loadCatalog();
    const mini = catalog.bugs[0]!;
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
    const set = await loadUpstreamSet();
    const all = new Map<string, { bug: BugEntry; upstream: boolean }>();
    for (const bug of catalog.bugs) all.set(bug.id, { bug, upstream: false });
    for (const bug of set.bugs) all.set(bug.id, { bug, upstream: true });
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
