import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadCatalog, loadUpstreamSystems, miniatureEntry } from '../../src/core/bugs/catalog';
import { SystemManifest } from '../../src/core/bugs/manifest';
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
