// lease-failover — a leaseholder dies; another store takes the lease; the dead one comes back.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'lease-failover',
  description:
    "Writes to both ranges, then range 2's leaseholder is killed: a surviving store acquires the lease, every " +
    'acknowledged write is still readable and new writes succeed; the killed store restarts and catches up to the ' +
    'same data as the others.',
  timeoutMs: 180000,
  async run(t) {
    const kv = await connect(t, 'client-failover');
    const h2 = await kv.findLeaseholder(2);
    t.check('range 2 has a leaseholder', h2 !== null);
    const expected = {};
    for (let i = 0; i < 10; i++) {
      for (const key of [`apple/${i}`, `zebra/${i}`]) {
        const r = await kv.put(key, `v${i}`);
        t.check('put is acknowledged', r.ok === true, { key, reply: r });
        expected[key] = `v${i}`;
      }
    }
    await t.kill(h2);
    t.note('killed the leaseholder of range 2', { node: h2 });
    const next = await kv.findLeaseholder(2, 45000, t.nodes.filter((n) => n !== h2));
    t.check('a surviving store acquires the lease', next !== null, { next });
    for (const [key, value] of Object.entries(expected)) {
      const r = await kv.get(key);
      t.check('acknowledged writes survive the failover', r.ok === true && r.value === value, { key, reply: r });
    }
    for (let i = 0; i < 5; i++) {
      const r = await kv.put(`zebra/new/${i}`, `n${i}`);
      t.check('writes succeed under the new leaseholder', r.ok === true, { reply: r });
      expected[`zebra/new/${i}`] = `n${i}`;
    }
    await t.restart(h2);
    await t.waitFor((e) => e.kind === 'log' && e.node === h2 && e.msg === 'store started', { timeoutMs: 20000, description: 'the store to restart', includePast: true });
    const r = await kv.put('zebra/restarted', 'yes');
    t.check('writes succeed after the restart', r.ok === true, { reply: r });
    expected['zebra/restarted'] = 'yes';
    const states = await converge(t, 45000);
    t.check('the restarted store caught up', states.length === 3 && new Set(states.map((s) => JSON.stringify(s.ranges.map((x) => x.data)))).size === 1, { states: states.map(brief) });
    for (const s of states) {
      const data = Object.assign({}, ...s.ranges.map((x) => x.data));
      const missing = Object.entries(expected).filter(([k, v]) => data[k]?.value !== v).map(([k]) => k);
      t.check('every acknowledged write is on every store', missing.length === 0, { node: s.id, missing });
    }
  },
};
