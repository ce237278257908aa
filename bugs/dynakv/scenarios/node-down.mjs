// node-down — a node is killed and comes back; hints and read repair catch it up.
import { brief, connect } from './lib/client.mjs';

export default {
  name: 'node-down',
  description:
    'A node is killed. The others mark it down; writes at QUORUM still succeed through every live ' +
    'coordinator while writes at ALL to keys it replicates are refused as unavailable. The node is ' +
    'restarted: everyone marks it up again, the hints written for it are delivered, and reads at ALL ' +
    'return every acknowledged write.',
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-down');
    const views = await kv.waitViews(t.nodes, { live: t.nodes, ring: t.nodes, timeoutMs: 60000 });
    t.check('every node sees the whole ring up', views.ok, { statuses: views.statuses.map(brief) });

    const victim = t.nodes[1 + Math.floor(t.random() * (t.nodes.length - 1))];
    const others = t.nodes.filter((n) => n !== victim);
    await t.kill(victim);
    t.note('killed a node', { victim });
    const down = await kv.waitViews(others, { live: others, timeoutMs: 10000 });
    t.check('the others mark the killed node down', down.ok, { statuses: down.statuses.map(brief) });

    const acked = {};
    let refused = 0;
    for (let i = 0; i < 20; i++) {
      const coordinator = others[i % others.length];
      const r = await kv.put(coordinator, `down/${i}`, `v${i}`, 'QUORUM');
      t.check('a QUORUM write succeeds with one node down', r.ok === true, { coordinator, reply: r });
      acked[`down/${i}`] = `v${i}`;
      const all = await kv.put(coordinator, `all/${i}`, `v${i}`, 'ALL');
      if (all.ok) acked[`all/${i}`] = `v${i}`;
      else {
        t.check('an ALL write fails only as unavailable', all.error === 'unavailable' && all.replicas.includes(victim), { reply: all });
        refused++;
      }
    }
    t.check('some ALL writes were refused', refused > 0, { refused });

    await t.restart(victim);
    const up = await kv.waitViews(t.nodes, { live: t.nodes, timeoutMs: 10000 });
    t.check('everyone marks the node up again', up.ok, { statuses: up.statuses.map(brief) });
    await t.sleep(500);
    for (const [k, v] of Object.entries(acked)) {
      const r = await kv.get(victim, k, 'ALL');
      t.check('a read at ALL returns the acknowledged write', r.ok === true && r.value === v, { key: k, reply: r });
    }
    const after = await Promise.all(t.nodes.map((n) => t.state(n)));
    t.check('every hint was delivered', after.every((s) => s.hints === 0), { states: after.map(brief) });
  },
};
