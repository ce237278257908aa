// double-failover — the leader dies, and so does its successor, moments after taking over.
import { poll } from '../../lib/scenario-lib.mjs';
import { brief, connect, converge, divergence } from './lib/client.mjs';

export default {
  name: 'double-failover',
  description:
    'With all three brokers in sync, the follower next in line for leadership (N) stops fetching while three records ' +
    'reach the leader (L) and the other follower (S); they are never acknowledged. L is killed; the LeaderAndIsr ' +
    'requests to S are lost for a while. N takes over, a record is written to it, and it is killed at once; S then ' +
    'takes over and production goes on. N and L are restarted. Every broker must end with the same log, holding every ' +
    'acknowledged record.',
  timeoutMs: 150000,
  config: { replicaLagTimeMaxMs: 10000 },
  async run(t) {
    const lc = await connect(t, 'client-0');
    const first = await lc.findLeader(30000);
    t.check('a leader is elected', first !== null);
    const full = await lc.waitIsr(lc.brokers(), 30000);
    t.check('all three brokers are in sync', full !== null);
    const acked = new Set();
    const produce = async (key) => {
      const r = await lc.produce(key, `v-${key}`, { timeoutMs: 15000 });
      t.check('acks=all produce is acknowledged', r.ok === true, { key, reply: r });
      acked.add(key);
    };
    for (let i = 0; i < 5; i++) await produce(`a${i}`);

    const L = first.leader;
    // The controller elects the first live ISR member, in the order of its ISR.
    const [N, S] = full.isr.filter((b) => b !== L);
    t.addLinkFault({ from: N, to: L, type: 'Fetch', drop: 1 });
    // A fetch already parked at the leader (long poll) is answered empty first.
    await t.sleep(500);
    const before = await t.state(L);
    for (let i = 0; i < 3; i++) void lc.send(L, 'Produce', { key: `x${i}`, value: 'unacked' }, 500);
    const s = (await poll(t, () => t.state(S), { timeoutMs: 4000, everyMs: 20, done: (st) => st.logEndOffset >= before.logEndOffset + 3 })).value;
    t.note('only the leader and S have the last three records', { leader: L, N, S, s: brief(s) });

    t.addLinkFault({ from: 'controller', to: S, type: 'LeaderAndIsr', drop: 1 });
    await t.kill(L);
    t.note('leader killed', { leader: L });
    const second = await lc.findLeader(15000, [N]);
    t.check('N takes over from the dead leader', second !== null, { metadata: await lc.metadata() });
    const n = await t.state(N);
    void lc.send(N, 'Produce', { key: 'y0', value: 'unacked' }, 500);
    await poll(t, () => t.state(N), { timeoutMs: 1000, everyMs: 10, done: (st) => st.logEndOffset > n.logEndOffset });
    await t.kill(N);
    t.clearLinkFaults();
    t.note('the new leader killed moments after taking over', { leader: N });

    const third = await lc.findLeader(15000, [S]);
    t.check('S takes over', third !== null, { metadata: await lc.metadata() });
    lc.leader = S;
    for (let i = 0; i < 5; i++) await produce(`b${i}`);
    await t.restart(N);
    await t.restart(L);
    t.check('the restarted brokers rejoin the ISR', (await lc.waitIsr(lc.brokers(), 30000)) !== null, { metadata: await lc.metadata() });
    for (let i = 0; i < 3; i++) await produce(`c${i}`);

    const states = await converge(t, lc);
    t.note('brokers at the end', { states: states.map(brief) });
    const leader = states.find((st) => st.id === S);
    t.check('S still leads at the end', leader?.role === 'leader', { states: states.map(brief) });
    for (const st of states) {
      if (st.id === S) continue;
      const diff = divergence(leader, st);
      t.check("every follower holds the leader's records at every offset", diff.length === 0, { follower: st.id, diff });
    }
    t.check('every broker holds the same log', states.length === 3 && new Set(states.map((st) => st.digest)).size === 1, { states: states.map(brief) });
    const all = await lc.consumeAll(S);
    const keys = new Set(all.records.map((r) => r.key));
    t.check('a consumer reads every acknowledged record', all.ok && [...acked].every((k) => keys.has(k)), { missing: [...acked].filter((k) => !keys.has(k)) });
  },
};
