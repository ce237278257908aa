import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findBug, loadCatalog } from '../../src/core/bugs/catalog';
import { ClientOperation, SystemManifest } from '../../src/core/bugs/manifest';
import { UpstreamSpec } from '../../src/core/bugs/upstream-spec';
import { decodeHeaders, encodeHeaders, natsMessage, natsSubject } from '../../src/core/cluster/upstream/nats-request';
import { debSrcEntries, hasDebSrc, packagesFor, sourceTreeVersion } from '../../src/core/cluster/upstream/setup';
import { natsEvent } from '../../src/core/events/formats/nats';

const BUGS = path.join(__dirname, '..', '..', 'bugs');

describe('upstream NATS (nats-server from apt-get source)', () => {
  let tmp: string;
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-upstream-nats-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('loads the NATS system and its bug: a source package fetched with apt-get source, dpkg-dev among the packages', async () => {
    const catalog = await loadCatalog();
    assert.deepEqual(catalog.problems, []);
    const nats = catalog.systems.find((s) => s.id === 'nats');
    assert.equal(nats?.kind, 'upstream');
    assert.deepEqual(nats?.manifest.upstream?.debian.source, { package: 'nats-server', version: '2.9.10-1', from: 'apt-source' });
    assert.equal(nats?.manifest.upstream?.logs, 'nats-text');
    assert.ok(packagesFor([nats!]).includes('dpkg-dev'));
    assert.ok(packagesFor([nats!]).includes('golang-github-nats-io-jwt-dev'));
    const bug = findBug(catalog, 'nats-memory-stream-replica-stalls');
    assert.equal(bug.kind, 'upstream');
    assert.equal(bug.manifest.tier, 2);
    // etcd's source is the installed package's files (the default).
    assert.equal(catalog.systems.find((s) => s.id === 'etcd')?.manifest.upstream?.debian.source.from, 'installed');
  });

  it('checks the source kind and the log format, and a NATS client operation’s subject', () => {
    const spec = JSON.parse(fs.readFileSync(path.join(BUGS, 'upstream', 'nats', 'system.json'), 'utf8')) as { upstream: { debian: { source: object } } };
    assert.equal(UpstreamSpec.safeParse({ ...spec.upstream, debian: { ...spec.upstream.debian, source: { package: 'nats-server', version: '2.9.10-1', from: 'git' } } }).success, false);
    assert.equal(UpstreamSpec.safeParse({ ...spec.upstream, logs: 'log4j' }).success, false);
    assert.equal(SystemManifest.safeParse(spec).success, true);
    const op = { type: 'Publish', doc: 'd', nats: { port: 'client', subject: '{subject}' } };
    assert.equal(ClientOperation.safeParse(op).success, true);
    assert.equal(ClientOperation.safeParse({ ...op, nats: { port: 'client', subject: 'a b' } }).success, false);
    assert.equal(ClientOperation.safeParse({ ...op, nats: { port: 'client', subject: 'x', path: '/' } }).success, false);
  });

  it('fills a request’s subject and message from its body', () => {
    assert.equal(natsSubject('$JS.API.STREAM.INFO.{stream}', { stream: 'ORDERS' }), '$JS.API.STREAM.INFO.ORDERS');
    assert.equal(natsSubject('orders.{n}', { n: 7 }), 'orders.7');
    assert.throws(() => natsSubject('$JS.API.STREAM.INFO.{stream}', {}), /needs "stream"/);
    assert.throws(() => natsSubject('{subject}', { subject: 'a b' }), /without spaces/);
    assert.deepEqual(natsMessage({}), { payload: Buffer.alloc(0) });
    assert.equal(natsMessage({ payload: 'hi' }).payload.toString(), 'hi');
    assert.equal(natsMessage({ payload: { seq: 3 } }).payload.toString(), '{"seq":3}');
    assert.deepEqual(natsMessage({ payload: 'x', headers: { 'Nats-Msg-Id': 'a1' } }).headers, { 'Nats-Msg-Id': 'a1' });
    assert.throws(() => natsMessage({ headers: { 'Bad Name': 'x' } }), /header/);
    assert.throws(() => natsMessage({ headers: { A: 'x\r\ny' } }), /header/);
    assert.equal(encodeHeaders({ 'Nats-Msg-Id': 'a1' }).toString(), 'NATS/1.0\r\nNats-Msg-Id: a1\r\n\r\n');
    assert.deepEqual(decodeHeaders('NATS/1.0 503\r\n\r\n'), { status: 503, headers: {} });
    assert.deepEqual(decodeHeaders('NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 1\r\n\r\n'), { status: 408, description: 'Request Timeout', headers: { 'Nats-Pending-Messages': '1' } });
    assert.deepEqual(decodeHeaders('NATS/1.0\r\nA: b\r\n\r\n'), { status: 200, headers: { A: 'b' } });
  });

  it('reads nats-server’s text lines as log events, with Raft groups and connections as fields', () => {
    const raft = natsEvent('[2] 2026/12/02 18:58:26.844137 [ERR] RAFT [BXScrY9i - S-R3M-oSu2De0W] Error sending snapshot to follower [fjFyEjc1]: raft: no snapshot available', 'n3', 1_000);
    assert.deepEqual(raft, {
      ts: 1_000,
      node: 'n3',
      kind: 'log',
      level: 'error',
      msg: 'RAFT [BXScrY9i - S-R3M-oSu2De0W] Error sending snapshot to follower [fjFyEjc1]: raft: no snapshot available',
      fields: { natsTs: '2026/12/02 18:58:26.844137', pid: 2, raftPeer: 'BXScrY9i', raftGroup: 'S-R3M-oSu2De0W' },
    });
    const route = natsEvent('[19945] 2026/12/02 18:26:58.570463 [INF] 127.0.0.21:6222 - rid:8 - Route connection created', 'n1', 5);
    assert.equal(route?.level, 'info');
    assert.deepEqual(route?.fields, { natsTs: '2026/12/02 18:26:58.570463', pid: 19945, remote: '127.0.0.21:6222', conn: 'rid:8' });
    assert.equal(natsEvent('[7] 2026/12/02 18:26:58.570463 [DBG] JetStream cluster new stream leader', 'n1', 0)?.level, 'debug');
    assert.equal(natsEvent('[7] 2026/12/02 18:26:58.570463 [WRN] Waiting for routing to be established...', 'n1', 0)?.level, 'warn');
    assert.equal(natsEvent('[7] 2026/12/02 18:26:58.570463 [FTL] Can not start', 'n1', 0)?.level, 'error');
    assert.equal(natsEvent('panic: runtime error', 'n1', 0), undefined);
    assert.equal(natsEvent('{"level":"info","msg":"zap"}', 'n1', 0), undefined);
  });

  it('makes deb-src entries for the Debian archives apt already uses, and reads an unpacked tree’s version', () => {
    const apt = path.join(tmp, 'apt');
    fs.mkdirSync(path.join(apt, 'sources.list.d'), { recursive: true });
    fs.writeFileSync(
      path.join(apt, 'sources.list.d', 'debian.sources'),
      'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n',
    );
    fs.writeFileSync(path.join(apt, 'sources.list.d', 'nodesource.sources'), 'Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\nComponents: main\n');
    fs.writeFileSync(path.join(apt, 'sources.list.d', 'extra.list'), '# old style\ndeb [signed-by=/k.gpg] http://archive.ubuntu.com/ubuntu jammy main universe\ndeb https://example.com/repo stable main\n');
    assert.equal(hasDebSrc(apt), false);
    const entries = debSrcEntries(apt) ?? '';
    const stanzas = entries.split('\n\n');
    assert.equal(stanzas.length, 3, entries);
    assert.match(entries, /Types: deb-src\nURIs: http:\/\/archive\.ubuntu\.com\/ubuntu\nSuites: jammy\nComponents: main universe\nSigned-By: \/k\.gpg/);
    assert.match(entries, /Types: deb-src\nURIs: http:\/\/deb\.debian\.org\/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: \/usr\/share\/keyrings\/debian-archive-keyring\.gpg/);
    assert.match(entries, /URIs: http:\/\/deb\.debian\.org\/debian-security\nSuites: bookworm-security/);
    assert.doesNotMatch(entries, /nodesource|example\.com/);
    fs.writeFileSync(path.join(apt, 'sources.list.d', 'ddbench-deb-src.sources'), entries);
    assert.equal(hasDebSrc(apt), true);
    assert.equal(debSrcEntries(path.join(tmp, 'nothing')), undefined);

    const tree = path.join(tmp, 'nats-server-2.9.10');
    assert.equal(sourceTreeVersion(tree), undefined);
    fs.mkdirSync(path.join(tree, 'debian'), { recursive: true });
    fs.writeFileSync(path.join(tree, 'debian', 'changelog'), 'nats-server (2.9.10-1) unstable; urgency=medium\n\n  * New upstream version.\n');
    assert.equal(sourceTreeVersion(tree), '2.9.10-1');
  });
});
