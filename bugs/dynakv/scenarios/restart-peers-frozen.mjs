// restart-peers-frozen — a node restarts while every other node is frozen.
import { poll } from '../../lib/scenario-lib.mjs';
import { brief, connect } from './lib/client.mjs';

export default {
  name: 'restart-peers-frozen',
  description:
    'Keys are written at ALL. n2 is killed; n1, n3 and n4 are paused (frozen, as a stalled hypervisor does) ' +
    'and n2 is restarted while they stay frozen. n2 must come up by itself within a few seconds and take ' +
    'a write at ONE for a key it replicates, as the first node of a full-cluster restart does. Once the ' +
    'others resume, every node must see all four up, the write taken at ONE must read back at ALL, and ' +
    'writes at ALL through every node must succeed.',
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-frozen');
    const views = await kv.waitViews(t.nodes, { live: t.nodes, ring: t.nodes, timeoutMs: 60000 });
    t.check('every node sees the whole ring up', views.ok, { statuses: views.statuses.map(brief) });

    // Keys that n2 replicates: a write at ONE through n2 needs only n2 itself.
    const mine = [];
    for (let i = 0; mine.length < 6; i++) {
      const e = await kv.send('n1', 'GetEndpoints', { key: `frozen/${i}` });
      if (e.ok && e.endpoints.includes('n2')) mine.push(`frozen/${i}`);
    }
    for (const k of mine) {
      const r = await kv.put('n1', k, `before-${k}`, 'ALL');
      t.check('a write at ALL is acknowledged', r.ok === true, { key: k, reply: r });
    }

    const others = t.nodes.filter((n) => n !== 'n2');
    await t.kill('n2');
    for (const n of others) await t.pause(n);
    await t.restart('n2');
    t.note('restarted n2 while the other nodes are frozen', { frozen: others });
    const frozenFor = t.sleep(12000);

    // Checked once the others are back, so that the run shows what n2 does after that too.
    const taken = await poll(t, () => kv.put('n2', mine[0], 'during', 'ONE'), { timeoutMs: 5000, everyMs: 250, done: (r) => r.ok === true });

    await frozenFor;
    for (const n of others) await t.resume(n);
    t.note('the other nodes resumed');
    const up = await kv.waitViews(t.nodes, { live: t.nodes, ring: t.nodes, timeoutMs: 15000 });

    t.check('n2 takes a write at ONE within a few seconds while the others are frozen', taken.ok, { reply: taken.value });
    t.check('every node sees all four up after the others resumed', up.ok, { statuses: up.statuses.map(brief) });

    const r = await kv.get('n3', mine[0], 'ALL');
    t.check('the write taken at ONE reads back at ALL', r.ok === true && r.value === 'during', { reply: r });
    for (let i = 1; i < mine.length; i++) {
      const coordinator = t.nodes[i % t.nodes.length];
      const w = await kv.put(coordinator, mine[i], `after-${i}`, 'ALL');
      t.check('a write at ALL succeeds after the others resumed', w.ok === true, { coordinator, reply: w });
      const g = await kv.get(t.nodes[(i + 1) % t.nodes.length], mine[i], 'ALL');
      t.check('a read at ALL returns it', g.ok === true && g.value === `after-${i}`, { reply: g });
    }
  },
};
