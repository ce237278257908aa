// leader-failover — the leader dies between writes; the rest carry on; it comes back.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'leader-failover',
  description:
    'Writes go through the leader; after an acknowledged write the leader is killed. The two followers elect ' +
    'a new leader in a higher epoch and take more writes. A follower is then killed and restarted while writes ' +
    'continue, and finally the old leader is restarted: it must rejoin, and every server must end with the same tree.',
  timeoutMs: 150000,
  async run(t) {
    const zk = await connect(t, 'client-0');
    const first = await zk.findLeader(30000);
    t.check('a leader is elected', first !== null);
    await zk.waitServing(t.nodes, 30000);
    const acked = {};
    const put = async (path, data) => {
      const r = await zk.create(path, data);
      t.check('create is acknowledged', r.ok === true, { path, reply: r });
      acked[path] = data;
    };
    for (let i = 0; i < 5; i++) await put(`/a${i}`, `v${i}`);

    await t.kill(first.id);
    t.note('killed the leader', { leader: first.id });
    const second = await zk.findLeader(30000, t.nodes.filter((n) => n !== first.id));
    t.check('the followers elect a new leader', second !== null);
    t.check('the new leader has a higher epoch', second.currentEpoch > first.currentEpoch, { first, second });
    for (let i = 0; i < 5; i++) await put(`/b${i}`, `v${i}`);

    const other = t.nodes.find((n) => n !== first.id && n !== second.id);
    await t.kill(other);
    const during = zk.create('/c0', 'v0', { timeoutMs: 15000 });
    await t.sleep(200);
    await Promise.all([t.restart(other), t.restart(first.id)]);
    const c0 = await during;
    t.check('a write during the follower restart is acknowledged', c0.ok === true, { c0 });
    acked['/c0'] = 'v0';
    for (let i = 1; i < 5; i++) await put(`/c${i}`, `v${i}`);

    const all = await zk.waitServing(t.nodes, 30000);
    t.check('every server is serving again', all !== null, { status: await zk.statusAll() });
    for (const node of t.nodes) {
      const r = await zk.read(node, '/c4');
      t.check('every server reads the last write after sync', r.ok === true && r.data === 'v4', { node, r });
    }
    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    t.check('all servers hold the same tree', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
    for (const s of states) {
      const missing = Object.entries(acked).filter(([p, v]) => s.tree?.[p] !== v).map(([p]) => p);
      t.check('every acknowledged write is on every server', missing.length === 0, { node: s.id, missing });
    }
  },
};
