// broker-failover — the leader dies while producing; the cluster carries on; it comes back.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'broker-failover',
  description:
    'A producer writes with acks=all; after an acknowledged record the leader broker is killed. The controller ' +
    'elects another in-sync broker with a higher leader epoch and production goes on. A follower is then killed ' +
    'and restarted, and finally the old leader is restarted; both must catch up, rejoin the ISR, and every broker ' +
    'must hold the same log with every acknowledged record.',
  timeoutMs: 150000,
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
    for (let i = 0; i < 8; i++) await produce(`a${i}`);

    await t.kill(first.leader);
    t.note('killed the leader', { leader: first.leader });
    const second = await lc.findLeader(15000, lc.brokers().filter((b) => b !== first.leader));
    t.check('another broker becomes leader', second !== null);
    t.check('with a higher leader epoch', second.leaderEpoch > first.leaderEpoch, { first, second });
    for (let i = 0; i < 8; i++) await produce(`b${i}`);

    const other = lc.brokers().find((b) => b !== first.leader && b !== second.leader);
    await t.kill(other);
    await produce('c0');
    await Promise.all([t.restart(other), t.restart(first.leader)]);
    for (let i = 1; i < 8; i++) await produce(`c${i}`);
    const isr = await lc.waitIsr(lc.brokers(), 30000);
    t.check('both restarted brokers rejoin the ISR', isr !== null, { metadata: await lc.metadata() });
    const all = await lc.consumeAll();
    const keys = new Set(all.records.map((r) => r.key));
    t.check('a consumer reads every acknowledged record', all.ok && [...acked].every((k) => keys.has(k)), { missing: [...acked].filter((k) => !keys.has(k)) });
    const states = await converge(t, lc);
    t.note('brokers at the end', { states: states.map(brief) });
    t.check('every broker holds the same log', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
  },
};
