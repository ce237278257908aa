// partitioned-primary-majority-write — a w:majority insert sent to a primary that is being cut off.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'partitioned-primary-majority-write',
  description:
    'After a few w:majority inserts, the primary is partitioned from both secondaries (clients still reach every ' +
    'member) and a w:majority insert with a 30 s wtimeout is sent to it. The secondaries elect a new primary, ' +
    'which takes more w:majority inserts; then the partition heals. Every insert acknowledged with ' +
    'w:majority must be on every member once the set has converged, and the set must keep taking writes.',
  timeoutMs: 60000,
  async run(t) {
    const c = await connect(t, 'client-0');
    const first = await c.findPrimary(25000);
    t.check('a primary is elected', first !== null);
    const acked = {};
    for (let i = 0; i < 3; i++) {
      const r = await c.insert(`a${i}`, i);
      t.check('w:majority insert is acknowledged', r.ok === true, { reply: r });
      acked[`a${i}`] = i;
    }
    const old = first.me;
    const others = t.nodes.filter((n) => n !== old);
    t.partition([[old], others]);
    t.note('primary partitioned from the secondaries', { primary: old });
    const pending = c.send(old, 'insert', { _id: 'during-partition', v: 'x', writeConcern: { w: 'majority', wtimeout: 30000 } }, 32000);

    const next = await c.findPrimary(20000, others);
    t.check('the majority side elects a new primary', next !== null && next.term > first.term, { next });
    for (let i = 0; i < 3; i++) {
      const r = await c.insert(`b${i}`, i);
      t.check('w:majority insert is acknowledged on the new primary', r.ok === true, { reply: r });
      acked[`b${i}`] = i;
    }
    t.heal();
    t.note('partition healed');
    const during = await pending;
    t.note('reply to the insert sent during the partition', { reply: during });
    if (during.ok) acked['during-partition'] = 'x';

    const conv = await converge(t, 8000);
    t.check('the set converges after the heal', conv.ok && conv.states.length === 3, { states: conv.states.map(brief) });
    for (const s of conv.states) {
      const missing = Object.entries(acked).filter(([k, v]) => s.docs[k] !== v).map(([k]) => k);
      t.check('every w:majority acknowledged insert is on every member', missing.length === 0, { node: s.id, missing });
    }
    const after = await c.insert('after-heal', 1);
    t.check('the set takes a w:majority write after the heal', after.ok === true, { after });
  },
};
