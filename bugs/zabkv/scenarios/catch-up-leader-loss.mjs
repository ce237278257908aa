// catch-up-leader-loss — the leader dies while a follower that missed many writes is catching up.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'catch-up-leader-loss',
  description:
    'A follower is stopped while the leader takes more writes than fit between two snapshots. When it comes back ' +
    'the leader sends it the whole tree (SNAP), but its NEWLEADER never reaches the follower and the leader dies. ' +
    'The follower and the other server elect a leader and take more writes; then the follower restarts. ' +
    'Every server must hold every acknowledged znode, and writes must go on.',
  timeoutMs: 150000,
  async run(t) {
    const zk = await connect(t, 'client-catchup');
    const first = await zk.findLeader(30000);
    t.check('a leader is elected', first !== null);
    await zk.waitServing(t.nodes, 30000);
    const acked = {};
    const create = async (path, data) => {
      const r = await zk.create(path, data);
      t.check('create is acknowledged', r.ok === true, { path, reply: r });
      acked[path] = data;
    };
    for (let i = 0; i < 4; i++) await create(`/a${i}`, `v${i}`);
    const current = await zk.findLeader(30000);
    t.check('a leader is serving', current !== null);
    const L = current.id;
    const [F, G] = t.nodes.filter((n) => n !== L);

    await t.kill(F);
    t.note('follower stopped for maintenance', { follower: F, leader: L });
    for (let i = 0; i < 55; i++) await create(`/b${i}`, `w${i}`);

    t.addLinkFault({ from: L, to: F, type: 'NEWLEADER', drop: 1 });
    const snap = t.waitFor((e) => e.kind === 'log' && e.node === F && e.msg === 'sync mode', { timeoutMs: 30000, description: 'the follower to be synced' });
    await t.restart(F);
    const mode = await snap;
    await t.kill(L);
    t.clearLinkFaults();
    t.note('leader died while the follower was catching up', { leader: L, follower: F, sync: mode.fields });

    const second = await zk.findLeader(30000, [F, G]);
    t.check('the two remaining servers elect a leader', second !== null);
    t.check('they serve', (await zk.waitServing([F, G], 30000)) !== null, { status: await zk.statusAll([F, G]) });
    for (let i = 0; i < 3; i++) await create(`/c${i}`, `x${i}`);
    const before = await zk.read(F, '/b54');
    t.check('the follower that caught up serves the batch', before.ok === true && before.found === true && before.data === 'w54', { node: F, before });

    await t.kill(F);
    await t.restart(F);
    t.note('follower restarted', { follower: F });
    t.check('both serve after the restart', (await zk.waitServing([F, G], 30000)) !== null, { status: await zk.statusAll([F, G]) });
    const seen = await zk.read(F, '/b0');
    t.note('read of /b0 on the restarted server', { node: F, seen });
    t.check('a znode created while the server was stopped is readable on it', seen.ok === true && seen.found === true && seen.data === 'w0', { node: F, seen });

    await t.restart(L);
    t.check('every server serves again', (await zk.waitServing(t.nodes, 30000)) !== null, { status: await zk.statusAll() });
    await create('/after', 'y');
    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    for (const s of states) {
      const missing = Object.entries(acked).filter(([p, v]) => s.tree?.[p] !== v).map(([p]) => p);
      t.check('every server holds every acknowledged znode', missing.length === 0, { node: s.id, missing: missing.slice(0, 10), count: missing.length });
    }
    t.check('all servers hold the same tree', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
  },
};
