// restart-after-uptime — a node restarts once the cluster has been up for a while.
import { poll } from '../../lib/scenario-lib.mjs';
import { brief, connect } from './lib/client.mjs';

export default {
  name: 'restart-after-uptime',
  description:
    'The cluster serves writes for a while. Then n2 is killed and restarted, as in a rolling restart. ' +
    'Within a few gossip rounds every node must see all four nodes up under n2\'s new generation, and ' +
    'writes and reads at ALL through every coordinator must succeed.',
  timeoutMs: 120000,
  config: { maxGenerationDifferenceS: 4 },
  async run(t) {
    const kv = await connect(t, 'client-uptime');
    const views = await kv.waitViews(t.nodes, { live: t.nodes, ring: t.nodes, timeoutMs: 60000 });
    t.check('every node sees the whole ring up', views.ok, { statuses: views.statuses.map(brief) });
    const before = await kv.status('n1');

    // Some uptime, with traffic.
    const d = t.deadline(6000);
    for (let i = 0; !d.expired; i++) {
      const r = await kv.put(t.nodes[i % t.nodes.length], `uptime/${i % 16}`, `v${i}`, 'QUORUM');
      t.check('a write at QUORUM is acknowledged', r.ok === true, { reply: r });
      await t.sleep(100);
    }

    await t.kill('n2');
    await t.restart('n2');
    const restarted = await t.until(
      async () => {
        const s = await kv.status('n2');
        return s.ok ? s : null;
      },
      { timeoutMs: 5000, description: 'n2 to answer after its restart' },
    );
    t.note('restarted n2', { generation: restarted.generation ?? null, firstGeneration: before.endpoints?.n2?.generation ?? null });

    // Every other node must take n2's new generation and see it up, within a few gossip rounds.
    const others = t.nodes.filter((n) => n !== 'n2');
    const taken = (s) => s.ok && s.endpoints?.n2?.alive === true && s.endpoints.n2.generation === restarted.generation;
    const r = await poll(t, () => Promise.all(others.map((n) => kv.status(n))), { timeoutMs: 8000, done: (ss) => ss.every(taken) });
    t.check("every node holds n2's new generation and sees it up", r.ok, {
      generation: restarted.generation ?? null,
      seen: r.value.map((s) => ({ id: s.id ?? null, n2: s.endpoints?.n2 ?? null })),
    });
    const up = await kv.waitViews(t.nodes, { live: t.nodes, timeoutMs: 2000 });
    t.check('every node sees all four up after n2 restarted', up.ok, { statuses: up.statuses.map(brief) });
    for (let i = 0; i < 8; i++) {
      const coordinator = t.nodes[i % t.nodes.length];
      const w = await kv.put(coordinator, `after/${i}`, `v${i}`, 'ALL');
      t.check('a write at ALL succeeds after the restart', w.ok === true, { coordinator, reply: w });
      const r = await kv.get(t.nodes[(i + 1) % t.nodes.length], `after/${i}`, 'ALL');
      t.check('a read at ALL sees it', r.ok === true && r.value === `v${i}`, { reply: r });
    }
  },
};
