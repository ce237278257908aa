import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findBug, loadCatalog, type BugEntry, type SystemEntry } from '../../src/core/bugs/catalog';
import { UpstreamSpec } from '../../src/core/bugs/upstream-spec';
import { copySystemParts, materialiseBuggySource } from '../../src/core/bugs/workspace';
import { packagesFor } from '../../src/core/cluster/upstream/setup';
import { hclogEvent } from '../../src/core/events/formats/hclog';

describe('upstream hashicorp/raft (a library with a host program)', () => {
  let tmp: string;
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-upstream-hraft-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  /**
   * The hraft system with its source tree replaced by a two-file stand-in under `tmp` (the
   * real raft.go where the package is installed, so the bug's patch applies), and the bug.
   */
  async function withFakeTree(): Promise<{ system: SystemEntry; bug: BugEntry; realRaftGo: boolean }> {
    const catalog = await loadCatalog();
    const real = catalog.systems.find((s) => s.id === 'hraft');
    assert.ok(real?.manifest.upstream);
    const realRaftGo = fs.existsSync(real.manifest.upstream.tree);
    const tree = path.join(tmp, 'tree');
    fs.mkdirSync(tree);
    fs.writeFileSync(path.join(tree, 'raft.go'), realRaftGo ? fs.readFileSync(path.join(real.manifest.upstream.tree, 'raft.go')) : 'package raft\n');
    fs.writeFileSync(path.join(tree, 'api.go'), 'package raft\n');
    const system = { ...real, manifest: { ...real.manifest, upstream: { ...real.manifest.upstream, tree } } };
    return { system, bug: findBug(catalog, 'hraft-deposed-leader-serves-reads'), realRaftGo };
  }

  it('loads the system and its bug: the installed Go sources, the host program, hclog JSON logs, four servers', async () => {
    const catalog = await loadCatalog();
    assert.deepEqual(catalog.problems, []);
    const hraft = catalog.systems.find((s) => s.id === 'hraft');
    assert.equal(hraft?.kind, 'upstream');
    assert.deepEqual(hraft?.manifest.upstream?.debian.source, { package: 'golang-github-hashicorp-raft-dev', version: '1.1.2-1', from: 'installed' });
    assert.deepEqual(hraft?.manifest.upstream?.host, { dir: 'host', into: 'cmd/raftkv' });
    assert.equal(hraft?.manifest.upstream?.logs, 'hclog-json');
    assert.deepEqual(hraft?.manifest.nodes, ['n1', 'n2', 'n3', 'n4']);
    assert.ok(packagesFor([hraft!]).includes('golang-github-hashicorp-raft-boltdb-dev'));
    const bug = findBug(catalog, 'hraft-deposed-leader-serves-reads');
    assert.equal(bug.kind, 'upstream');
    assert.equal(bug.manifest.tier, 2);
    assert.deepEqual(bug.manifest.faults, ['partition']);
  });

  it('puts the host program into the workspace’s src/ beside the library, and the bug into the library', async () => {
    const { system, bug, realRaftGo } = await withFakeTree();
    const correct = path.join(tmp, 'correct');
    copySystemParts(system, correct);
    assert.deepEqual(fs.readdirSync(path.join(correct, 'src')).sort(), ['api.go', 'cmd', 'raft.go']);
    assert.equal(fs.readFileSync(path.join(correct, 'src', 'cmd', 'raftkv', 'main.go'), 'utf8'), fs.readFileSync(path.join(system.dir, 'host', 'main.go'), 'utf8'));
    assert.ok(fs.existsSync(path.join(correct, 'README.md')));
    if (!realRaftGo) return;
    // The bug's patch applies to the library, not the host.
    const buggy = path.join(tmp, 'buggy');
    materialiseBuggySource(system, bug, buggy);
    assert.notEqual(fs.readFileSync(path.join(buggy, 'src', 'raft.go'), 'utf8'), fs.readFileSync(path.join(correct, 'src', 'raft.go'), 'utf8'));
    assert.equal(fs.readFileSync(path.join(buggy, 'src', 'cmd', 'raftkv', 'main.go'), 'utf8'), fs.readFileSync(path.join(correct, 'src', 'cmd', 'raftkv', 'main.go'), 'utf8'));
  });

  it('refuses a host folder outside the system’s definition or the source, and an unknown log format', () => {
    const spec = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'bugs', 'upstream', 'hraft', 'system.json'), 'utf8')) as { upstream: Record<string, unknown> };
    assert.equal(UpstreamSpec.safeParse(spec.upstream).success, true);
    assert.equal(UpstreamSpec.safeParse({ ...spec.upstream, host: { dir: '../etcd', into: 'cmd/raftkv' } }).success, false);
    assert.equal(UpstreamSpec.safeParse({ ...spec.upstream, host: { dir: 'host', into: '/usr/bin' } }).success, false);
    assert.equal(UpstreamSpec.safeParse({ ...spec.upstream, host: { dir: 'host' } }).success, false);
    assert.equal(UpstreamSpec.safeParse({ ...spec.upstream, logs: 'hclog-text' }).success, false);
  });

  it('reads hclog’s JSON lines: level, message, module, caller as the source, the pairs as fields', () => {
    const e = hclogEvent(
      '{"@caller":"github.com/hashicorp/raft/raft.go:893","@level":"warn","@message":"failed to contact quorum of nodes, stepping down","@module":"raft","@timestamp":"2026-12-03T06:17:08.059117Z","term":3}',
      'n1',
      1_500,
    );
    assert.deepEqual(e, {
      ts: 1_500,
      node: 'n1',
      kind: 'log',
      level: 'warn',
      msg: 'failed to contact quorum of nodes, stepping down',
      src: { file: 'github.com/hashicorp/raft/raft.go', line: 893 },
      fields: { term: 3, module: 'raft', hclogTs: '2026-12-03T06:17:08.059117Z' },
    });
    assert.equal(hclogEvent('{"@level":"trace","@message":"x"}', 'n2', 0)?.level, 'debug');
    assert.equal(hclogEvent('{"@level":"info","@message":"client API listening","@module":"raft.kv"}', 'n2', 0)?.fields?.module, 'raft.kv');
    assert.equal(hclogEvent('{"level":"info","msg":"a zap line"}', 'n1', 0), undefined);
    assert.equal(hclogEvent('panic: runtime error', 'n1', 0), undefined);
    assert.equal(hclogEvent('{"@level":"info"', 'n1', 0), undefined);
  });
});
