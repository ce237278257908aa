// second-failover-clock-ahead — two failovers in a row while one member's clock runs ahead.
import { brief, connect, converge } from './lib/client.mjs';

const SKEW_MS = 8000;

export default {
  name: 'second-failover-clock-ahead',
  description:
    'After a few w:majority inserts that every member holds, the primary\'s clock jumps 8 s ahead and the primary ' +
    'is cut off from the secondaries (clients still reach it); it acknowledges a w:1 insert. The other two ' +
    'elect a new primary, which takes w:majority inserts that both of them apply. The cut heals and the new ' +
    'primary is killed at once; the remaining two elect a third primary. After a pause of the skew\'s length ' +
    'the killed member is restarted and more w:majority inserts are made. Every w:majority insert must ' +
    'be on every member once the set has converged, and the set must keep taking w:majority writes.',
  timeoutMs: 60000,
  config: { fetchTimeoutMs: 400 },
  async run(t) {
    const c = await connect(t, 'client-0');
    const first = await c.findPrimary(25000);
    t.check('a primary is elected', first !== null);
    const old = first.me;
    const survivors = t.nodes.filter((n) => n !== old);
    const acked = {};
    let last = null;
    for (let i = 0; i < 2; i++) {
      last = await c.insert(`a${i}`, i);
      t.check('w:majority insert is acknowledged', last.ok === true, { reply: last });
      acked[`a${i}`] = i;
    }
    t.check('both secondaries apply the first inserts', await applied(t, survivors, last.opTime, 5000), { opTime: last.opTime });

    t.skewClock(old, SKEW_MS);
    t.partition([[old], survivors]);
    t.note('primary clock set ahead and primary cut off', { node: old, skewMs: SKEW_MS });
    const fast = await c.send(old, 'insert', { _id: 'unreplicated', v: 'w1', writeConcern: { w: 1 } });
    t.check('the cut-off primary acknowledges a w:1 insert', fast.ok === true, { fast });

    const second = await c.findPrimary(20000, survivors);
    t.check('the other two elect a new primary', second !== null && second.term > first.term, { second });
    for (let i = 0; i < 2; i++) {
      last = await c.insert(`b${i}`, i);
      t.check('w:majority insert is acknowledged on the new primary', last.ok === true, { reply: last });
      acked[`b${i}`] = i;
    }
    t.check('both members of the majority apply its inserts', await applied(t, survivors, last.opTime, 5000), { opTime: last.opTime });

    t.heal();
    await t.kill(second.me);
    t.note('healed the cut and killed the new primary', { node: second.me });
    const rest = t.nodes.filter((n) => n !== second.me);
    const third = await primaryAfter(t, c, rest, second.term, 20000);
    t.check('the remaining two elect a primary', third !== null && third.term > second.term, { third });

    await t.sleep(SKEW_MS);
    await t.restart(second.me);
    t.note('restarted the killed primary', { node: second.me });
    for (let i = 0; i < 2; i++) {
      const r = await c.insert(`c${i}`, i);
      t.check('w:majority insert is acknowledged after the second failover', r.ok === true, { reply: r });
      acked[`c${i}`] = i;
    }

    const conv = await converge(t, 10000);
    t.check('the set converges', conv.ok && conv.states.length === 3, { states: conv.states.map(brief) });
    for (const s of conv.states) {
      const missing = Object.entries(acked).filter(([k, v]) => s.docs[k] !== v).map(([k]) => k);
      t.check('every w:majority write is on every member', missing.length === 0, { node: s.id, missing });
    }
    const after = await c.insert('after-converge', 1);
    t.check('the set takes a w:majority write at the end', after.ok === true, { after });
  },
};

/** The primary among `among` once one reports a term above `term`, or null after timeoutMs. */
async function primaryAfter(t, c, among, term, timeoutMs) {
  const d = t.deadline(timeoutMs);
  while (!d.expired) {
    const p = await c.findPrimary(1000, among);
    if (p && p.term > term) return p;
    await t.sleep(100);
  }
  return null;
}

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
