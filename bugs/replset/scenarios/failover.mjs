// failover — losing the primary, electing another, and the old one catching up.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'failover',
  description:
    'w:majority inserts through the primary, then the primary is killed: the other two elect a new primary ' +
    'in a higher term, every acknowledged write is still readable there and new writes succeed; the old ' +
    'primary is restarted and catches up to the same oplog as the others.',
  timeoutMs: 60000,
  async run(t) {
    const c = await connect(t, 'client-failover');
    const first = await c.findPrimary(25000);
    t.check('a primary is elected', first !== null);
    const acked = {};
    for (let i = 0; i < 10; i++) {
      const r = await c.insert(`before${i}`, i);
      t.check('w:majority insert is acknowledged', r.ok === true, { reply: r });
      acked[`before${i}`] = i;
    }
    await t.kill(first.me);
    t.note('killed the primary', { node: first.me });
    const survivors = t.nodes.filter((n) => n !== first.me);
    const next = await c.findPrimary(20000, survivors);
    t.check('the survivors elect a new primary in a higher term', next !== null && next.term > first.term, { next });
    for (let i = 0; i < 5; i++) {
      const r = await c.insert(`after${i}`, i);
      t.check('writes succeed on the new primary', r.ok === true, { reply: r });
      acked[`after${i}`] = i;
    }
    for (const [k, v] of Object.entries(acked)) {
      const r = await c.find(next.me, k, 'majority');
      t.check('every acknowledged write survives the failover', r.ok === true && r.v === v, { _id: k, reply: r });
    }
    await t.restart(first.me);
    t.note('restarted the old primary', { node: first.me });
    const conv = await converge(t);
    t.check('the old primary catches up', conv.ok && conv.states.length === 3, { states: conv.states.map(brief) });
    for (const s of conv.states) {
      const missing = Object.entries(acked).filter(([k, v]) => s.docs[k] !== v).map(([k]) => k);
      t.check('every acknowledged write is on every member', missing.length === 0, { node: s.id, missing });
    }
  },
};
