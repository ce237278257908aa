// partitioned-primary-linearizable-read — a linearizable read sent to a primary that has just been cut off.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'partitioned-primary-linearizable-read',
  description:
    'A w:majority insert of x = 0 and a linearizable read of it on the primary; then the primary is cut off from ' +
    'both secondaries (clients still reach every member). Once the other two have elected a new primary, x = 1 is ' +
    'written there with w:majority, and x is read with readConcern linearizable from the old primary and from the ' +
    'new one. A linearizable read that succeeds must return 1. After the heal the set must take a w:majority write, ' +
    'converge and serve a linearizable read of the latest value. Then the same with a primary that is paused while ' +
    'it is cut off, and read from as soon as it resumes.',
  timeoutMs: 60000,
  config: { priorities: { n1: 2, n2: 2, n3: 2 } },
  async run(t) {
    const c = await connect(t, 'client-0');
    const first = await c.findPrimary(25000);
    t.check('a primary is elected', first !== null);
    const w0 = await c.insert('x', 0);
    t.check('w:majority insert is acknowledged', w0.ok === true, { w0 });
    const r0 = await c.find(first.me, 'x', 'linearizable', 6000);
    t.check('the primary serves a linearizable read of the acknowledged value', r0.ok === true && r0.v === 0, { r0 });

    const old = first.me;
    const others = t.nodes.filter((n) => n !== old);
    t.partition([[old], others]);
    t.note('primary cut off from the secondaries', { primary: old });
    const next = await c.findPrimary(20000, others);
    t.check('the other two elect a new primary', next !== null && next.term > first.term, { next });
    const w1 = await c.insert('x', 1);
    t.check('w:majority insert is acknowledged on the new primary', w1.ok === true, { w1 });

    const [fromOld, fromNew] = await Promise.all([c.find(old, 'x', 'linearizable', 8000), c.find(next.me, 'x', 'linearizable', 6000)]);
    t.note('linearizable reads after the write', { fromOld, fromNew });
    t.check('a linearizable read on the old primary fails or returns the acknowledged value', fromOld.ok !== true || fromOld.v === 1, { fromOld });
    t.check('the new primary serves a linearizable read of the acknowledged value', fromNew.ok === true && fromNew.v === 1, { fromNew });

    t.heal();
    t.note('partition healed');
    const after = await c.insert('after-heal', 1);
    t.check('the set takes a w:majority write after the heal', after.ok === true, { after });
    const conv = await converge(t, 8000);
    t.check('the set converges after the heal', conv.ok && conv.states.length === 3, { states: conv.states.map(brief) });
    const p = await c.findPrimary(10000);
    const last = p ? await c.find(p.me, 'x', 'linearizable', 6000) : null;
    t.check('the primary serves a linearizable read of the latest value after the heal', last?.ok === true && last.v === 1, { last });

    // Second round: the primary stalls (a long pause) while it is cut off, and answers as soon as it wakes.
    const stalled = p.me;
    const rest = t.nodes.filter((n) => n !== stalled);
    await t.pause(stalled);
    t.partition([[stalled], rest]);
    t.note('primary paused and cut off', { primary: stalled });
    const third = await primaryAfter(t, c, rest, p.term, 20000);
    t.check('the other two elect a new primary while the old one is paused', third !== null, { third });
    const w2 = await c.insert('x', 2);
    t.check('w:majority insert is acknowledged on the newest primary', w2.ok === true, { w2 });
    await t.resume(stalled);
    const fromStalled = await c.find(stalled, 'x', 'linearizable', 8000);
    t.note('linearizable read on the primary that was paused', { fromStalled });
    t.check('a linearizable read on the paused primary fails or returns the acknowledged value', fromStalled.ok !== true || fromStalled.v === 2, { fromStalled });
    t.heal();
    const end = await c.insert('after-pause', 1);
    t.check('the set takes a w:majority write after the pause', end.ok === true, { end });
    const conv2 = await converge(t, 8000);
    t.check('the set converges after the pause', conv2.ok && conv2.states.length === 3, { states: conv2.states.map(brief) });
  },
};

/** The primary among `among` once one reports a term above `term`, or null after timeoutMs. */
async function primaryAfter(t, c, among, term, timeoutMs) {
  const d = t.deadline(timeoutMs);
  while (!d.expired) {
    const found = await c.findPrimary(1000, among);
    if (found && found.term > term) return found;
    await t.sleep(100);
  }
  return null;
}
