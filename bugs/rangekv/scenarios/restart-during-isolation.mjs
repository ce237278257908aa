// restart-during-isolation — a store restarts while range 1's leaseholder is being cut off.
import { brief, connect, converge } from './lib/client.mjs';

/** The raft tick (system.json tickMs). */
const TICK_MS = 25;
/** How long before the cut-off follower's next election the other follower is restarted. */
const LEAD_MS = 2000;

const range1 = (s) => s?.ranges.find((r) => r.rangeId === 1);

export default {
  name: 'restart-during-isolation',
  description:
    "Writes v0 to key 'k' in range 1. One follower of range 1 is cut off from the other two stores. A little " +
    "before that follower's election timer fires, range 1's leaseholder is cut off from both others instead, and " +
    'the other follower crashes and restarts at once. The two stores that can talk elect a leaseholder, which ' +
    "acknowledges v1 for 'k'; right after that, 'k' is read on the cut-off leaseholder, which must not answer v0. " +
    'Then the network heals, range 1 takes a last write and every store converges on it.',
  timeoutMs: 150000,
  // Longer timeouts than the defaults, as on hosts spread over racks; the lease stays below the election timeout.
  config: { electionTimeoutMs: [5000, 10000], leaseMs: 4000 },
  async run(t) {
    const kv = await connect(t, 'client-0');
    const a = await kv.findLeaseholder(1);
    t.check('range 1 has a leaseholder', a !== null);
    const w0 = await kv.put('k', 'v0');
    t.check('the first write is acknowledged', w0.ok === true, { w0 });
    const others = t.nodes.filter((n) => n !== a);
    const [b, c] = t.random() < 0.5 ? others : [...others].reverse();
    await t.until(async () => (await Promise.all(t.nodes.map((n) => t.state(n).catch(() => null)))).every((s) => range1(s)?.data.k?.value === 'v0'), {
      timeoutMs: 10000,
      description: 'every store to apply v0',
    });

    t.partition([[a, c], [b]]);
    t.note('cut off a follower of range 1', { leaseholder: a, follower: b });
    // Wait until the cut-off follower's election timer is about to fire (its state shows the timer, in ticks).
    for (;;) {
      const rb = range1(await t.state(b));
      const untilElection = (rb.electionTimeout - rb.electionElapsed) * TICK_MS;
      if (untilElection <= LEAD_MS) break;
      await t.sleep(Math.min(untilElection - LEAD_MS, 200));
    }

    t.partition([[a], [b, c]]);
    await t.restart(c);
    t.note('cut off the leaseholder and restarted the other follower', { leaseholder: a, restarted: c });

    let w1 = null;
    const elect = t.deadline(30000);
    while (!elect.expired && w1 === null) {
      for (const n of [b, c]) {
        const r = await kv.send(n, 'Put', { key: 'k', value: 'v1' }, 1000);
        if (r.ok) {
          w1 = { node: n, ...r };
          break;
        }
      }
      if (w1 === null) await t.sleep(TICK_MS);
    }
    t.check('the two connected stores elect a leaseholder that acknowledges a new write', w1 !== null);
    const reads = [];
    const watch = t.deadline(300);
    while (!watch.expired) {
      reads.push(await kv.send(a, 'Get', { key: 'k' }, 500));
      await t.sleep(50);
    }
    t.note('reads on the cut-off leaseholder', { node: a, reads: reads.map((r) => (r.ok ? r.value : r.error)) });
    const stale = reads.find((r) => r.ok && r.value === 'v0');
    t.check('the cut-off store never serves the value overwritten by an acknowledged write', stale === undefined, {
      node: a,
      stale,
      writtenBy: w1.node,
      state: stale ? brief(await t.state(a).catch(() => null)) : null,
    });

    t.heal();
    kv.leaseholders.clear();
    const w2 = await kv.put('k', 'v2', { timeoutMs: 45000 });
    t.check('range 1 takes a write after the heal', w2.ok === true, { w2 });
    const states = await converge(t, 45000);
    t.check('every store converges', states.length === 3, { states: states.map(brief) });
    for (const s of states) t.check('every store holds the last write', range1(s)?.data.k?.value === 'v2', { node: s.id, k: range1(s)?.data.k ?? null });
  },
};
