// restart-removed-node — a node removed from the ring is started again by mistake.
import { brief, connect } from './lib/client.mjs';

export default {
  name: 'restart-removed-node',
  description:
    'n4 is killed and removed with RemoveNode through n1. Then n4 is started again by mistake, with its old ' +
    'data: it must refuse to start and stay out of the cluster. n1, n2 and n3 keep n4 out of their ring and ' +
    'never see it up, and writes and reads at ALL keep working on the three of them.',
  timeoutMs: 120000,
  config: { removedExpireMs: 30000 },
  async run(t) {
    const kv = await connect(t, 'client-removed');
    const views = await kv.waitViews(t.nodes, { live: t.nodes, ring: t.nodes, timeoutMs: 60000 });
    t.check('every node sees the whole ring up', views.ok, { statuses: views.statuses.map(brief) });
    const rest = ['n1', 'n2', 'n3'];
    for (let i = 0; i < 6; i++) {
      const w = await kv.put(rest[i % rest.length], `before/${i}`, `v${i}`, 'ALL');
      t.check('a write at ALL is acknowledged', w.ok === true, { reply: w });
    }

    await t.kill('n4');
    const down = await kv.waitViews(rest, { live: rest, timeoutMs: 10000 });
    t.check('the others mark n4 down', down.ok, { statuses: down.statuses.map(brief) });
    const removed = await kv.send('n1', 'RemoveNode', { node: 'n4' });
    t.check('RemoveNode is accepted', removed.ok === true, { removed });
    const ring = await kv.waitViews(rest, { live: rest, ring: rest, timeoutMs: 8000 });
    t.check('n4 leaves every ring', ring.ok, { statuses: ring.statuses.map(brief) });

    await t.restart('n4');
    t.note('started the removed n4 again');
    for (let i = 0; i < 16; i++) {
      await t.sleep(500);
      const statuses = await Promise.all(rest.map((n) => kv.status(n)));
      const back = statuses.filter((s) => !s.ok || s.ring.includes('n4') || s.live.includes('n4'));
      t.check('n4 stays out of the ring and down', back.length === 0, { statuses: statuses.map(brief) });
    }
    const n4 = await kv.status('n4');
    t.check('n4 refuses requests', n4.ok === false, { reply: n4 });

    for (let i = 0; i < 6; i++) {
      const coordinator = rest[i % rest.length];
      const w = await kv.put(coordinator, `after/${i}`, `v${i}`, 'ALL');
      t.check('a write at ALL succeeds on the remaining nodes', w.ok === true, { coordinator, reply: w });
      const r = await kv.get(rest[(i + 1) % rest.length], `before/${i}`, 'ALL');
      t.check('a read at ALL sees an earlier write', r.ok === true && r.value === `v${i}`, { reply: r });
    }
  },
};
