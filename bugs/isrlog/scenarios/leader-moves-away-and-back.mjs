// leader-moves-away-and-back — leadership moves to another broker and back while one follower misses news.
import { poll } from '../../lib/scenario-lib.mjs';
import { brief, connect, converge, divergence } from './lib/client.mjs';

export default {
  name: 'leader-moves-away-and-back',
  description:
    'With all three brokers in sync, one follower (F2) stops fetching for a moment while a producer writes three ' +
    'records, so only the leader (L) and the other follower (F3) get them (they are never acknowledged). Then an admin ' +
    'moves leadership to F2 — the LeaderAndIsr request to F3 is lost — and, once L has caught up with F2, back to L. ' +
    'The producer goes on writing. Every broker must end with the same log, holding every acknowledged record.',
  timeoutMs: 150000,
  config: { replicaLagTimeMaxMs: 10000, fetchBackoffMs: 2000 },
  async run(t) {
    const lc = await connect(t, 'client-0');
    const first = await lc.findLeader(30000);
    t.check('a leader is elected', first !== null);
    t.check('all three brokers are in sync', (await lc.waitIsr(lc.brokers(), 30000)) !== null);
    const acked = new Set();
    const produce = async (key) => {
      const r = await lc.produce(key, `v-${key}`, { timeoutMs: 15000 });
      t.check('acks=all produce is acknowledged', r.ok === true, { key, reply: r });
      acked.add(key);
    };
    for (let i = 0; i < 5; i++) await produce(`a${i}`);

    const L = first.leader;
    const [F2, F3] = lc.brokers().filter((b) => b !== L);
    t.addLinkFault({ from: F2, to: L, type: 'Fetch', drop: 1 });
    const before = await t.state(L);
    for (let i = 0; i < 3; i++) void lc.send(L, 'Produce', { key: `x${i}`, value: 'unacked' }, 500);
    const f3 = (await poll(t, () => t.state(F3), { timeoutMs: 4000, everyMs: 20, done: (st) => st.logEndOffset >= before.logEndOffset + 3 })).value;
    t.note('only the leader and F3 have the last three records', { leader: L, F2, F3, f3: brief(f3) });

    t.clearLinkFaults();
    t.addLinkFault({ from: 'controller', to: F3, type: 'LeaderAndIsr', drop: 1 });
    let away = { ok: false };
    for (let i = 0; i < 5 && !away.ok; i++) away = await lc.send('controller', 'ElectLeaders', { broker: F2 });
    t.check('leadership moves to F2', away.ok === true && away.leader === F2, { away });
    const onF2 = await lc.findLeader(10000, [F2]);
    t.check('F2 leads', onF2 !== null);
    await poll(t, () => Promise.all([t.state(L), t.state(F2)]), { timeoutMs: 4000, everyMs: 20, done: ([l, f2]) => l.logEndOffset === f2.logEndOffset && l.role === 'follower' });
    t.clearLinkFaults();
    let back = { ok: false };
    for (let i = 0; i < 5 && !back.ok; i++) back = await lc.send('controller', 'ElectLeaders', { broker: L });
    t.check('leadership moves back to L', back.ok === true && back.leader === L, { back });
    lc.leader = L;
    for (let i = 0; i < 6; i++) await produce(`b${i}`);

    const states = await converge(t, lc);
    t.note('brokers at the end', { states: states.map(brief) });
    const leader = states.find((s) => s.id === L);
    for (const s of states) {
      if (s.id === L) continue;
      const diff = divergence(leader, s);
      t.check('every follower holds the leader\'s records at every offset', diff.length === 0, { follower: s.id, diff });
    }
    t.check('every broker holds the same log', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
    const all = await lc.consumeAll(L);
    const keys = new Set(all.records.map((r) => r.key));
    t.check('a consumer reads every acknowledged record', all.ok && [...acked].every((k) => keys.has(k)), { missing: [...acked].filter((k) => !keys.has(k)) });
  },
};
