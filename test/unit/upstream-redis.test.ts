import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findBug, loadCatalog } from '../../src/core/bugs/catalog';
import { ClientOperation, SystemManifest } from '../../src/core/bugs/manifest';
import { UpstreamSpec } from '../../src/core/bugs/upstream-spec';
import { mirrorTree } from '../../src/core/cluster/upstream/build';
import { decodeReply, encodeCommand, RedisErrorReply, redisCommand, replyJson } from '../../src/core/cluster/upstream/redis-request';
import { packagesFor } from '../../src/core/cluster/upstream/setup';
import { redisEvent } from '../../src/core/events/formats/redis';

const BUGS = path.join(__dirname, '..', '..', 'bugs');

describe('upstream Redis (redis-server from apt-get source)', () => {
  let tmp: string;
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-upstream-redis-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('loads the Redis system and its bug: a source package built with make in a work tree, a RESP readiness probe', async () => {
    const catalog = await loadCatalog();
    assert.deepEqual(catalog.problems, []);
    const redis = catalog.systems.find((s) => s.id === 'redis');
    assert.equal(redis?.kind, 'upstream');
    const spec = redis?.manifest.upstream;
    assert.deepEqual(spec?.debian.source, { package: 'redis', version: '5:7.0.15-1~deb12u10', from: 'apt-source' });
    assert.equal(spec?.logs, 'redis-text');
    assert.equal(spec?.build.workTree, 'work');
    assert.deepEqual(spec?.node.ready, { port: 'client', redis: ['PING'] });
    for (const p of ['dpkg-dev', 'libjemalloc-dev', 'make', 'gcc']) assert.ok(packagesFor([redis!]).includes(p), p);
    for (const op of redis?.manifest.client ?? []) assert.ok(op.redis !== undefined, `${op.type} is a Redis command`);
    const bug = findBug(catalog, 'redis-replica-refuses-second-failover');
    assert.equal(bug.kind, 'upstream');
    assert.equal(bug.manifest.tier, 2);
    assert.deepEqual(bug.manifest.faults, ['pause']);
  });

  it('checks the probes, the log format and a Redis client operation', () => {
    const spec = JSON.parse(fs.readFileSync(path.join(BUGS, 'upstream', 'redis', 'system.json'), 'utf8')) as { upstream: { node: Record<string, unknown>; build: Record<string, unknown> } };
    assert.equal(SystemManifest.safeParse(spec).success, true);
    const up = spec.upstream;
    assert.equal(UpstreamSpec.safeParse({ ...up, logs: 'redis-json' }).success, false);
    assert.equal(UpstreamSpec.safeParse({ ...up, node: { ...up.node, ready: { port: 'client', redis: [] } } }).success, false);
    assert.equal(UpstreamSpec.safeParse({ ...up, node: { ...up.node, ready: { port: 'client', path: '/x', redis: ['PING'] } } }).success, false);
    assert.equal(UpstreamSpec.safeParse({ ...up, node: { ...up.node, state: { port: 'client', redis: ['ROLE'] } } }).success, false, 'state takes a list of commands');
    assert.equal(UpstreamSpec.safeParse({ ...up, build: { ...up.build, workTree: '../x' } }).success, false);
    const op = { type: 'Get', doc: 'd', args: { key: 'string' }, redis: { port: 'client', command: ['GET', '{key}'] } };
    assert.equal(ClientOperation.safeParse(op).success, true);
    assert.equal(ClientOperation.safeParse({ ...op, redis: { port: 'client', command: [] } }).success, false);
    assert.equal(ClientOperation.safeParse({ ...op, redis: { port: 'client', command: ['GET'], path: '/' } }).success, false);
  });

  it('fills a command’s words from the body, a node’s address and a port’s number', () => {
    assert.deepEqual(redisCommand(['SET', '{key}', '{value}'], { key: 'k', value: 'a b' }), ['SET', 'k', 'a b']);
    assert.deepEqual(redisCommand(['CLUSTER', 'ADDSLOTSRANGE', '{from}', '{to}'], { from: 0, to: 5460 }), ['CLUSTER', 'ADDSLOTSRANGE', '0', '5460']);
    assert.deepEqual(redisCommand(['{words}'], { words: ['CLUSTER', 'COUNTKEYSINSLOT', 7] }), ['CLUSTER', 'COUNTKEYSINSLOT', '7']);
    assert.deepEqual(redisCommand(['GET', 'user:{id}'], { id: 42 }), ['GET', 'user:42']);
    const at = { ip: (n: string) => (n === 'n2' ? '10.1.0.3' : 'x'), port: (p: string) => (p === 'bus' ? 16379 : 6379) };
    assert.deepEqual(redisCommand(['CLUSTER', 'MEET', '{ip:peer}', '{port:client}', '{port:bus}'], { peer: 'n2' }, at), ['CLUSTER', 'MEET', '10.1.0.3', '6379', '16379']);
    assert.throws(() => redisCommand(['GET', '{key}'], {}), /needs "key"/);
    assert.throws(() => redisCommand(['GET', '{key}'], { key: { a: 1 } }), /needs "key"/);
    assert.throws(() => redisCommand(['{words}'], { words: ['GET', null] }), /needs "words"/);
    assert.throws(() => redisCommand(['CLUSTER', 'MEET', '{ip:peer}'], { peer: 'n2' }), /only a running cluster knows/);
  });

  it('encodes commands and decodes every RESP2 reply, also in pieces', () => {
    assert.equal(encodeCommand(['SET', 'k', 'välue']).toString(), '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$6\r\nvälue\r\n');
    const one = (s: string) => decodeReply(Buffer.from(s))?.value;
    assert.equal(one('+OK\r\n'), 'OK');
    assert.equal(one(':-12\r\n'), -12);
    assert.equal(one('$5\r\nhe\r\nl\r\n'), 'he\r\nl');
    assert.equal(one('$-1\r\n'), null);
    assert.equal(one('*-1\r\n'), null);
    assert.deepEqual(one('-MOVED 3999 10.1.0.3:6379\r\n'), new RedisErrorReply('MOVED 3999 10.1.0.3:6379'));
    const role = '*5\r\n$5\r\nslave\r\n$8\r\n10.1.0.2\r\n:6379\r\n$9\r\nconnected\r\n:1442\r\n';
    assert.deepEqual(one(role), ['slave', '10.1.0.2', 6379, 'connected', 1442]);
    assert.deepEqual(replyJson(one('*2\r\n*1\r\n:1\r\n-ERR no\r\n') as never), [[1], { error: 'ERR no' }]);
    const buf = Buffer.from(role);
    for (let i = 0; i < buf.length; i++) assert.equal(decodeReply(buf.subarray(0, i)), undefined, `incomplete at ${i}`);
    assert.equal(decodeReply(buf)?.end, buf.length);
    assert.throws(() => decodeReply(Buffer.from('HTTP/1.1 200 OK\r\n')), /not a RESP reply/);
    assert.throws(() => decodeReply(Buffer.from(':x\r\n')), /not a RESP integer/);
  });

  it('reads redis-server’s log lines as events, with its role and the cluster node ids it names', () => {
    // Lines of redis-server 7.0.15 as built by `ddbench setup upstream`.
    const ready = redisEvent('3845:M 03 Dec 2026 01:20:24.188 * Ready to accept connections', 'n1', 1_000);
    assert.deepEqual(ready, { ts: 1_000, node: 'n1', kind: 'log', level: 'info', msg: 'Ready to accept connections', fields: { redisTs: '03 Dec 2026 01:20:24.188', pid: 3845, role: 'master' } });
    const id = redisEvent("3845:M 03 Dec 2026 01:20:24.187 * No cluster configuration found, I'm 97d87fca9a500b04582ab660ca7a6159a074b537", 'n1', 0);
    assert.deepEqual(id?.fields?.clusterNodes, ['97d87fca9a500b04582ab660ca7a6159a074b537']);
    assert.equal(redisEvent('3845:C 03 Dec 2026 01:20:24.186 # Configuration loaded', 'n1', 0)?.fields?.role, 'child');
    assert.equal(redisEvent('3845:C 03 Dec 2026 01:20:24.186 # Configuration loaded', 'n1', 0)?.level, 'warn');
    assert.equal(redisEvent('3845:S 03 Dec 2026 01:20:24.186 - Accepted 10.1.0.1:40000', 'n1', 0)?.level, 'debug');
    // A failover's lines, from a validation run of redis-replica-refuses-second-failover (n2, n4 and n5).
    const fail = redisEvent('2:M 03 Dec 2026 02:17:03.708 * FAIL message received from 014ce76e6e08e50c8e07314df4987c328d194385 about 2669284878426558675686ca0dd12e44707b3479', 'n2', 0);
    assert.deepEqual(fail?.fields?.clusterNodes, ['014ce76e6e08e50c8e07314df4987c328d194385', '2669284878426558675686ca0dd12e44707b3479']);
    const won = redisEvent("2:S 03 Dec 2026 02:17:04.710 # Failover election won: I'm the new master.", 'n4', 0);
    assert.deepEqual([won?.level, won?.fields?.role, won?.fields?.clusterNodes], ['warn', 'replica', undefined]);
    assert.deepEqual(redisEvent('2:S 03 Dec 2026 02:17:04.805 # Configuration change detected. Reconfiguring myself as a replica of c1d3dd98d68ef134b6eacdf34a15d63dba0cbb5d', 'n5', 0)?.fields?.clusterNodes, ['c1d3dd98d68ef134b6eacdf34a15d63dba0cbb5d']);
    const cant = redisEvent("2:S 03 Dec 2026 02:17:15.779 # Currently unable to failover: Disconnected from master for longer than allowed. Please check the 'cluster-replica-validity-factor' configuration option.", 'n5', 0);
    assert.equal(cant?.level, 'warn');
    assert.match(cant?.msg ?? '', /^Currently unable to failover/);
    const sig = redisEvent('3845:signal-handler (1796260827) Received SIGTERM scheduling shutdown...', 'n1', 0);
    assert.deepEqual(sig?.fields, { redisTs: 1796260827, pid: 3845, role: 'signal-handler' });
    assert.equal(redisEvent('                _._', 'n1', 0), undefined);
    assert.equal(redisEvent('[7] 2026/12/02 18:26:58.570463 [INF] nats', 'n1', 0), undefined);
  });

  it('mirrors a source into a work tree: changed files rewritten, unchanged ones and build products left alone, removed ones deleted', () => {
    const src = path.join(tmp, 'src');
    const work = path.join(tmp, 'work');
    fs.mkdirSync(path.join(src, 'lib'), { recursive: true });
    fs.writeFileSync(path.join(src, 'a.c'), 'a');
    fs.writeFileSync(path.join(src, 'lib', 'b.c'), 'b');
    fs.writeFileSync(path.join(src, 'gone.c'), 'g');
    fs.writeFileSync(path.join(src, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    fs.symlinkSync('a.c', path.join(src, 'link.c'));
    mirrorTree(src, work);
    assert.equal(fs.readFileSync(path.join(work, 'lib', 'b.c'), 'utf8'), 'b');
    assert.equal(fs.statSync(path.join(work, 'run.sh')).mode & 0o111, 0o111);
    assert.equal(fs.readlinkSync(path.join(work, 'link.c')), 'a.c');
    fs.writeFileSync(path.join(work, 'a.o'), 'object');
    const old = new Date(Date.now() - 60_000);
    for (const f of ['a.c', 'lib/b.c']) fs.utimesSync(path.join(work, f), old, old);
    fs.writeFileSync(path.join(src, 'lib', 'b.c'), 'b2');
    fs.rmSync(path.join(src, 'gone.c'));
    mirrorTree(src, work);
    assert.equal(fs.readFileSync(path.join(work, 'lib', 'b.c'), 'utf8'), 'b2');
    assert.ok(fs.statSync(path.join(work, 'lib', 'b.c')).mtimeMs > old.getTime() + 1_000, 'a changed file is newer than what was built from it');
    assert.equal(Math.round(fs.statSync(path.join(work, 'a.c')).mtimeMs / 1000), Math.round(old.getTime() / 1000), 'an unchanged file keeps its time');
    assert.equal(fs.existsSync(path.join(work, 'gone.c')), false);
    assert.equal(fs.readFileSync(path.join(work, 'a.o'), 'utf8'), 'object');
  });
});
