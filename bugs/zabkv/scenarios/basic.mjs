// basic — the everyday behaviour of a healthy ensemble.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'basic',
  description:
    'A healthy ensemble elects a leader; clients create znodes through the leader and through followers, ' +
    'update them with and without an expected version, delete one, and read them back from every server after ' +
    'a sync; every server ends with the same tree.',
  timeoutMs: 150000,
  async run(t) {
    const zk = await connect(t, 'client-basic');
    const leader = await zk.findLeader(30000);
    t.check('a leader is elected and serving', leader !== null);
    const all = await zk.waitServing(t.nodes, 30000);
    t.check('every server is serving', all !== null);
    const followers = t.nodes.filter((n) => n !== leader.id);

    const expected = {};
    for (let i = 0; i < 12; i++) {
      const node = [leader.id, ...followers][i % 3];
      const r = await zk.create(`/app${i}`, `v${i}`, { node });
      t.check('create is acknowledged', r.ok === true, { node, path: `/app${i}`, reply: r });
      expected[`/app${i}`] = `v${i}`;
    }
    const dup = await zk.send(followers[0], 'Create', { path: '/app0', data: 'again' });
    t.check('creating an existing znode fails with NODEEXISTS', dup.ok === false && dup.error === 'NODEEXISTS', { dup });
    const orphan = await zk.send(leader.id, 'Create', { path: '/missing/child', data: 'x' });
    t.check('creating under a missing parent fails with NONODE', orphan.ok === false && orphan.error === 'NONODE', { orphan });

    const s1 = await zk.setData('/app1', 'v1-b', 0, { node: followers[1] });
    t.check('setData with the right version succeeds', s1.ok === true && s1.stat.version === 1, { s1 });
    const s2 = await zk.setData('/app1', 'v1-c', 0, { node: leader.id });
    t.check('setData with a stale version fails with BADVERSION', s2.ok === false && s2.error === 'BADVERSION', { s2 });
    const s3 = await zk.setData('/app2', 'v2-b', -1, { node: followers[0] });
    t.check('setData with version -1 succeeds', s3.ok === true, { s3 });
    expected['/app1'] = 'v1-b';
    expected['/app2'] = 'v2-b';
    const del = await zk.write('Delete', { path: '/app3', version: -1 }, { node: followers[1] });
    t.check('delete is acknowledged', del.ok === true, { del });
    delete expected['/app3'];

    for (const node of t.nodes) {
      for (const [path, value] of Object.entries({ '/app1': 'v1-b', '/app2': 'v2-b', '/app11': 'v11' })) {
        const r = await zk.read(node, path);
        t.check('a read after sync sees the last write', r.ok === true && r.found === true && r.data === value, { node, path, reply: r });
      }
      const gone = await zk.read(node, '/app3');
      t.check('a deleted znode is gone everywhere', gone.ok === true && gone.found === false, { node, gone });
    }

    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    t.check('all servers processed the same zxid', states.length === 3 && new Set(states.map((s) => s.lastZxid)).size === 1, { states: states.map(brief) });
    t.check('all servers hold the same tree', new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
    for (const s of states) {
      const wrong = Object.entries(expected).filter(([p, v]) => s.tree?.[p] !== v).map(([p]) => p);
      t.check('every acknowledged write is on every server', wrong.length === 0 && s.znodeCount === Object.keys(expected).length, { node: s.id, wrong });
    }
  },
};
