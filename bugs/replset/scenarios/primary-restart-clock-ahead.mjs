// primary-restart-clock-ahead — a primary whose clock runs ahead dies right after a w:1 write and comes back.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'primary-restart-clock-ahead',
  description:
    "The primary's clock runs 30 s ahead of the other members'. After a few w:majority inserts, a w:1 insert " +
    'is acknowledged by the primary and the primary is killed at once, before its secondaries fetch that entry. ' +
    'The other two elect a new primary, which takes more w:majority inserts. The old primary is restarted: ' +
    'within a few seconds it must be a secondary holding exactly the oplog of the others, with every ' +
    'w:majority write, and the set must keep taking w:majority writes.',
  timeoutMs: 60000,
  config: { fetchIntervalMs: 500 },
  async run(t) {
    const c = await connect(t, 'client-0');
    const first = await c.findPrimary(25000);
    t.check('a primary is elected', first !== null);
    const old = first.me;
    t.skewClock(old, 30000);
    t.note('primary clock set 30 s ahead', { node: old });
    const acked = {};
    for (let i = 0; i < 2; i++) {
      const r = await c.insert(`a${i}`, i);
      t.check('w:majority insert is acknowledged', r.ok === true, { reply: r });
      acked[`a${i}`] = i;
    }
    const fast = await c.send(old, 'insert', { _id: 'unreplicated', v: 'w1', writeConcern: { w: 1 } });
    await t.kill(old);
    t.note('w:1 insert acknowledged, primary killed', { node: old, reply: fast });
    t.check('the w:1 insert was acknowledged', fast.ok === true, { fast });

    const survivors = t.nodes.filter((n) => n !== old);
    const next = await c.findPrimary(20000, survivors);
    t.check('the survivors elect a new primary', next !== null);
    for (let i = 0; i < 2; i++) {
      const r = await c.insert(`b${i}`, i);
      t.check('w:majority insert is acknowledged on the new primary', r.ok === true, { reply: r });
      acked[`b${i}`] = i;
    }

    await t.restart(old);
    t.note('restarted the old primary', { node: old });
    const conv = await converge(t, 5000);
    t.check('the restarted member catches up with the set', conv.ok && conv.states.length === 3, { states: conv.states.map(brief) });
    for (const s of conv.states) {
      const missing = Object.entries(acked).filter(([k, v]) => s.docs[k] !== v).map(([k]) => k);
      t.check('every w:majority write is on every member', missing.length === 0, { node: s.id, missing });
    }
    const after = await c.insert('after-restart', 1);
    t.check('the set takes a w:majority write after the restart', after.ok === true, { after });
  },
};
