// stalled-primary-majority-read — majority reads on a former primary that stalled while it was cut off.
import { brief, connect, converge } from './lib/client.mjs';

/** How long majority reads are polled on the former primary after the heal. */
const WATCH_MS = 1500;

export default {
  name: 'stalled-primary-majority-read',
  description:
    'After a w:majority insert of x, the primary is cut off from both secondaries (clients still reach every ' +
    'member) and its process stalls. The other two elect a new primary, which takes a w:majority overwrite of x. ' +
    'The stalled member resumes, still cut off, and acknowledges a w:1 overwrite of x; then the cut heals. For ' +
    'the next 1.5 s, readConcern majority reads of x on the former primary must never return the w:1 value, ' +
    'which the set never committed. Then the new primary takes more w:majority inserts, the set must converge ' +
    'with x at its w:majority value everywhere, and every member must serve that value to majority reads.',
  timeoutMs: 60000,
  async run(t) {
    const c = await connect(t, 'client-0');
    const first = await c.findPrimary(25000);
    t.check('a primary is elected', first !== null);
    const old = first.me;
    const others = t.nodes.filter((n) => n !== old);
    const committed = await c.insert('x', 'committed');
    t.check('w:majority insert of x is acknowledged', committed.ok === true, { committed });

    t.partition([[old], others]);
    await t.pause(old);
    t.note('primary cut off from the secondaries, and its process stalled', { node: old });
    const next = await c.findPrimary(20000, others);
    t.check('the other two elect a new primary', next !== null && next.term > first.term, { next });
    const fresh = await c.insert('x', 'fresh');
    t.check('the new primary acknowledges a w:majority overwrite of x', fresh.ok === true, { fresh });

    await t.resume(old);
    t.note('stalled member resumed, still cut off', { node: old });
    const stale = await c.send(old, 'insert', { _id: 'x', v: 'stale', writeConcern: { w: 1 } });
    t.check('the resumed member, still primary in its own view, acknowledges a w:1 overwrite of x', stale.ok === true, { stale });
    t.heal();
    t.note('cut healed');

    const seen = [];
    const watch = t.deadline(WATCH_MS);
    while (!watch.expired) {
      const r = await c.find(old, 'x', 'majority', 500);
      if (r.ok) seen.push(r.v);
      await t.sleep(50);
    }
    t.check('majority reads on the former primary are answered', seen.length > 0, { seen });
    t.check('a majority read never returns the w:1 value the set did not commit', !seen.includes('stale'), {
      node: old,
      values: [...new Set(seen)],
    });

    for (let i = 0; i < 3; i++) {
      const r = await c.insert(`after${i}`, i);
      t.check('the new primary takes w:majority inserts after the heal', r.ok === true, { reply: r });
    }
    const conv = await converge(t, 10000);
    t.check('the set converges', conv.ok && conv.states.length === 3, { states: conv.states.map(brief) });
    for (const s of conv.states) {
      t.check('x holds its w:majority value on every member', s.docs.x === 'fresh' && s.docs.after2 === 2, { node: s.id, x: s.docs.x });
      const r = await c.find(s.id, 'x', 'majority');
      t.check('every member serves the w:majority value of x to majority reads', r.ok === true && r.v === 'fresh', { node: s.id, reply: r });
    }
  },
};
