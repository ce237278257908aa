// basic — the everyday behaviour of a healthy cluster.
import { brief, connect } from './lib/client.mjs';

export default {
  name: 'basic',
  description:
    'A healthy four-node cluster: every node sees the whole ring and every other node up; writes at ONE, ' +
    'QUORUM and ALL through different coordinators are acknowledged; reads at QUORUM and ALL through any ' +
    'coordinator return the newest value; an overwrite wins over the older value; every replica of every key ' +
    'ends up with the same cells.',
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-basic');
    const views = await kv.waitViews(t.nodes, { live: t.nodes, ring: t.nodes, timeoutMs: 60000 });
    t.check('every node sees the whole ring up', views.ok, { statuses: views.statuses.map(brief) });

    const expected = {};
    const levels = ['ONE', 'QUORUM', 'ALL'];
    for (let i = 0; i < 24; i++) {
      const coordinator = t.nodes[i % t.nodes.length];
      const cl = levels[i % levels.length];
      const r = await kv.put(coordinator, `key/${i}`, `v${i}`, cl);
      t.check('a write is acknowledged', r.ok === true, { coordinator, cl, reply: r });
      expected[`key/${i}`] = `v${i}`;
    }
    for (let i = 0; i < 24; i += 3) {
      const r = await kv.put(t.nodes[(i + 1) % t.nodes.length], `key/${i}`, `v${i}-b`, 'QUORUM');
      t.check('an overwrite is acknowledged', r.ok === true, { reply: r });
      expected[`key/${i}`] = `v${i}-b`;
    }
    await t.sleep(300);
    for (let i = 0; i < 24; i++) {
      const coordinator = t.nodes[(i + 2) % t.nodes.length];
      const cl = i % 2 === 0 ? 'QUORUM' : 'ALL';
      const r = await kv.get(coordinator, `key/${i}`, cl);
      t.check('a read returns the newest value', r.ok === true && r.value === expected[`key/${i}`], { coordinator, cl, key: `key/${i}`, reply: r });
    }
    const missing = await kv.get('n1', 'never-written', 'QUORUM');
    t.check('a key never written is not found', missing.ok === true && missing.found === false, { missing });

    // Every write went to all three replicas: each node holds the keys it replicates.
    const states = await Promise.all(t.nodes.map((n) => t.state(n)));
    const copies = {};
    for (const s of states) for (const [k, v] of Object.entries(s.kv)) if (expected[k] === v) copies[k] = (copies[k] ?? 0) + 1;
    const short = Object.keys(expected).filter((k) => copies[k] !== 3);
    t.check('every key has three up-to-date replicas', short.length === 0, { short, copies });
  },
};
