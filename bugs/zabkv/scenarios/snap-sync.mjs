// snap-sync — a follower that missed more than a snapshot's worth of writes catches up by SNAP, then restarts.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'snap-sync',
  description:
    'A follower is stopped while the leader takes more writes than fit between two snapshots; when it comes back ' +
    'the leader must send it the whole tree (SNAP). It must then serve every acknowledged znode, keep them across ' +
    'its own restart, and every server must end with the same tree while writes go on.',
  timeoutMs: 150000,
  async run(t) {
    const zk = await connect(t, 'client-snap');
    const first = await zk.findLeader(30000);
    t.check('a leader is elected', first !== null);
    await zk.waitServing(t.nodes, 30000);
    const acked = {};
    const create = async (path, data) => {
      const r = await zk.create(path, data);
      t.check('create is acknowledged', r.ok === true, { path, reply: r });
      acked[path] = data;
    };
    for (let i = 0; i < 3; i++) await create(`/s${i}`, `v${i}`);
    const leader = await zk.findLeader(30000);
    t.check('a leader is serving', leader !== null);
    const F = t.nodes.find((n) => n !== leader.id);

    await t.kill(F);
    t.note('follower stopped', { follower: F, leader: leader.id });
    for (let i = 0; i < 55; i++) await create(`/b${i}`, `w${i}`);

    const snap = t.waitFor((e) => e.kind === 'log' && e.node === F && e.msg === 'sync mode', { timeoutMs: 30000, description: 'the follower to be synced' });
    await t.restart(F);
    const mode = await snap;
    t.check('the follower is synced with the whole tree', mode.fields?.mode === 'SNAP', { mode: mode.fields });
    t.check('every server serves', (await zk.waitServing(t.nodes, 30000)) !== null, { status: await zk.statusAll() });
    const seen = await zk.read(F, '/b54');
    t.check('the follower serves a znode it missed', seen.ok === true && seen.found === true && seen.data === 'w54', { seen });
    for (let i = 0; i < 3; i++) await create(`/c${i}`, `x${i}`);

    await t.kill(F);
    await t.restart(F);
    t.note('follower restarted after its SNAP sync', { follower: F });
    t.check('every server serves after the restart', (await zk.waitServing(t.nodes, 30000)) !== null, { status: await zk.statusAll() });
    await create('/after', 'y');
    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    for (const s of states) {
      const missing = Object.entries(acked).filter(([p, v]) => s.tree?.[p] !== v).map(([p]) => p);
      t.check('every server holds every acknowledged znode', missing.length === 0, { node: s.id, missing });
    }
    t.check('all servers hold the same tree', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
  },
};
