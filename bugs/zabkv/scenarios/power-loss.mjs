// power-loss — every server loses power at once; the followers come back without the leader.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'power-loss',
  description:
    'Writes go through the leader and are acknowledged. Then every server loses power at the same moment ' +
    '(anything not yet on disk is gone). Only the two former followers come back: they must elect a leader ' +
    'between them, every acknowledged write must still be there, and new writes must succeed.',
  timeoutMs: 150000,
  async run(t) {
    const zk = await connect(t, 'client-power');
    const first = await zk.findLeader(30000);
    t.check('a leader is elected', first !== null);
    await zk.waitServing(t.nodes, 30000);
    const acked = {};
    for (let i = 0; i < 8; i++) {
      const r = await zk.create(`/p${i}`, `v${i}`);
      t.check('create is acknowledged', r.ok === true, { path: `/p${i}`, reply: r });
      acked[`/p${i}`] = `v${i}`;
    }

    t.note('power loss', { leader: first.id });
    await Promise.all(t.nodes.map((n) => t.kill(n)));
    const followers = t.nodes.filter((n) => n !== first.id);
    await Promise.all(followers.map((n) => t.restart(n)));
    const second = await zk.findLeader(30000, followers);
    t.check('the two former followers elect a leader', second !== null);
    t.check('they are serving', (await zk.waitServing(followers, 30000)) !== null, { status: await zk.statusAll(followers) });
    const after = await zk.create('/after', 'v');
    t.check('a write after the power loss is acknowledged', after.ok === true, { after });
    acked['/after'] = 'v';
    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    for (const s of states) {
      const missing = Object.entries(acked).filter(([p, v]) => s.tree?.[p] !== v).map(([p]) => p);
      t.check('every acknowledged write survives the power loss', missing.length === 0, { node: s.id, missing });
    }
  },
};
