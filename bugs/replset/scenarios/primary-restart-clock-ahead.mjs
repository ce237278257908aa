// primary-restart-clock-ahead — a primary whose clock runs ahead dies right after a w:1 write and comes back.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'primary-restart-clock-ahead',
  description:
    "The primary's clock runs 30 s ahead of the other members'. After a few w:majority inserts, once both " +
    'secondaries hold them, the primary is cut off from the secondaries (clients still reach it), acknowledges ' +
    'a w:1 insert and is killed at once, so no secondary ever fetches that entry; the cut is then healed. ' +
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
    let last = null;
    for (let i = 0; i < 2; i++) {
      last = await c.insert(`a${i}`, i);
      t.check('w:majority insert is acknowledged', last.ok === true, { reply: last });
      acked[`a${i}`] = i;
    }
    const survivors = t.nodes.filter((n) => n !== old);
    const held = await applied(t, survivors, last.opTime, 5000);
    t.check('both secondaries apply the w:majority inserts', held, { opTime: last.opTime });

    // Cut off first, so that no fetch reaches the primary between its w:1 insert and its death.
    t.partition([[old], survivors]);
    const fast = await c.send(old, 'insert', { _id: 'unreplicated', v: 'w1', writeConcern: { w: 1 } });
    await t.kill(old);
    t.heal();
    t.note('w:1 insert acknowledged, primary killed', { node: old, reply: fast });
    t.check('the w:1 insert was acknowledged', fast.ok === true, { fast });

    const next = await c.findPrimary(20000, survivors);
    t.check('the survivors elect a new primary', next !== null);
    for (let i = 0; i < 2; i++) {
      const r = await c.insert(`b${i}`, i);
      t.check('w:majority insert is acknowledged on the new primary', r.ok === true, { reply: r });
      acked[`b${i}`] = i;
    }

    await t.restart(old);
    t.note('restarted the old primary', { node: old });
    const conv = await converge(t, 10000);
    t.check('the restarted member catches up with the set', conv.ok && conv.states.length === 3, { states: conv.states.map(brief) });
    for (const s of conv.states) {
      const missing = Object.entries(acked).filter(([k, v]) => s.docs[k] !== v).map(([k]) => k);
      t.check('every w:majority write is on every member', missing.length === 0, { node: s.id, missing });
    }
    const after = await c.insert('after-restart', 1);
    t.check('the set takes a w:majority write after the restart', after.ok === true, { after });
  },
};

/** Waits until every given member's last applied optime is opTime, looking every 100 ms (the first time after 100 ms). */
async function applied(t, nodes, opTime, timeoutMs) {
  const d = t.deadline(timeoutMs);
  while (!d.expired) {
    await t.sleep(100);
    const states = await Promise.all(nodes.map((n) => t.state(n).catch(() => null)));
    if (states.every((s) => s && s.lastApplied.t === opTime.t && s.lastApplied.ts === opTime.ts)) return true;
  }
  return false;
}
