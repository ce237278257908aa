// split — a range splits through its log; both halves serve; a restarted store rebuilds both.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'split',
  description:
    "Writes keys on both sides of 's' in range 2, then splits range 2 at 's': the left half keeps range 2, the " +
    'right half becomes range 3, which elects a leaseholder; every acknowledged write reads back from the range ' +
    'that now holds its key, and both halves take writes. A store is ' +
    'killed and restarted and catches up to the same three ranges and data; follower reads then return the ' +
    'newest values.',
  timeoutMs: 180000,
  async run(t) {
    const kv = await connect(t, 'client-split');
    const h2 = await kv.findLeaseholder(2);
    t.check('range 2 has a leaseholder', h2 !== null);
    const expected = {};
    for (let i = 0; i < 5; i++) {
      for (const key of [`nut/${i}`, `wax/${i}`]) {
        const r = await kv.put(key, `v${i}`);
        t.check('put is acknowledged', r.ok === true, { key, reply: r });
        expected[key] = `v${i}`;
      }
    }
    const split = await kv.toRange(2, 'AdminSplit', { key: 's' });
    t.check('the split is acknowledged', split.ok === true && split.right === 3, { split });
    const h3 = await kv.findLeaseholder(3);
    t.check('the right-hand range elects a leaseholder', h3 !== null, { h3 });
    const rangeOf = (key) => (key < 's' ? 2 : 3);
    for (const [key, value] of Object.entries(expected)) {
      const r = await kv.toRange(rangeOf(key), 'Get', { key });
      t.check('acknowledged writes read back after the split', r.ok === true && r.value === value, { key, reply: r });
    }
    for (let i = 0; i < 3; i++) {
      for (const key of [`nut/new/${i}`, `wax/new/${i}`]) {
        const r = await kv.toRange(rangeOf(key), 'Put', { key, value: `n${i}` });
        t.check('both halves take writes', r.ok === true, { key, reply: r });
        expected[key] = `n${i}`;
      }
    }
    const victim = t.nodes.find((n) => n !== kv.leaseholders.get(2) && n !== kv.leaseholders.get(3)) ?? t.nodes.find((n) => n !== h2);
    await t.kill(victim);
    t.note('killed a store', { node: victim });
    const w = await kv.toRange(3, 'Put', { key: 'wax/down', value: 'd' });
    t.check('writes succeed with a store down', w.ok === true, { reply: w });
    expected['wax/down'] = 'd';
    await t.restart(victim);
    await t.waitFor((e) => e.kind === 'log' && e.node === victim && e.msg === 'store started', { timeoutMs: 20000, description: 'the store to restart', includePast: true });
    const after = await kv.toRange(3, 'Put', { key: 'wax/restarted', value: 'yes' });
    t.check('writes succeed after the restart', after.ok === true, { reply: after });
    expected['wax/restarted'] = 'yes';
    const states = await converge(t, 60000);
    t.check('every store holds the three ranges with the same data', states.length === 3 && states.every((s) => s.ranges.length === 3), { states: states.map(brief) });
    for (const s of states) {
      const data = Object.assign({}, ...s.ranges.map((x) => x.data));
      const missing = Object.entries(expected).filter(([k, v]) => data[k]?.value !== v).map(([k]) => k);
      t.check('every acknowledged write is on every store', missing.length === 0, { node: s.id, missing });
    }
    for (const node of t.nodes) {
      const r = await kv.send(node, 'Get', { key: 'wax/restarted', follower: true }, 8000);
      t.check('follower reads return the newest value', r.ok === true && r.value === 'yes', { node, reply: r });
    }
  },
};
