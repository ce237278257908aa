// session-lost-during-failover — a broker loses its controller session while leadership fails over and comes back.
import { poll } from '../../lib/scenario-lib.mjs';
import { brief, connect, converge, divergence } from './lib/client.mjs';

export default {
  name: 'session-lost-during-failover',
  description:
    'With all three brokers in sync, one follower (S) stops fetching while three records reach the leader (L) and the ' +
    'other follower (Z); they are never acknowledged. Z then loses its session with the controller (the network between ' +
    'them is cut, Z still reaches the brokers) and L is killed. S takes over and production goes on; L is restarted, ' +
    'catches up, and an admin moves leadership back to it. The network to Z heals, Z must rejoin the ISR, and every ' +
    'broker must end with the same log. Leadership is finally moved to Z, and a consumer must read every acknowledged ' +
    'record from it and nothing that was not.',
  timeoutMs: 180000,
  config: { replicaLagTimeMaxMs: 10000 },
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
    const elect = async (broker) => {
      let r = { ok: false };
      for (let i = 0; i < 20 && !r.ok; i++) {
        r = await lc.send('controller', 'ElectLeaders', { broker });
        if (!r.ok) await t.sleep(250);
      }
      t.check('an admin election moves leadership', r.ok === true && r.leader === broker, { broker, reply: r });
      t.check('the elected broker leads', (await lc.findLeader(10000, [broker])) !== null, { broker, metadata: await lc.metadata() });
      lc.leader = broker;
    };
    for (let i = 0; i < 5; i++) await produce(`a${i}`);

    const L = first.leader;
    const [Z, S] = lc.brokers().filter((b) => b !== L);
    t.addLinkFault({ from: S, to: L, type: 'Fetch', drop: 1 });
    // A fetch already parked at the leader (long poll) is answered empty first.
    await t.sleep(500);
    const before = await t.state(L);
    for (let i = 0; i < 3; i++) void lc.send(L, 'Produce', { key: `x${i}`, value: 'unacked' }, 500);
    const z = (await poll(t, () => t.state(Z), { timeoutMs: 4000, everyMs: 20, done: (st) => st.logEndOffset >= before.logEndOffset + 3 })).value;
    t.note('only the leader and Z have the last three records', { leader: L, Z, S, z: brief(z) });

    const cutZ = () => {
      t.addLinkFault({ from: Z, to: 'controller', drop: 1 });
      t.addLinkFault({ from: 'controller', to: Z, drop: 1 });
    };
    cutZ();
    t.note('the network between Z and the controller is cut', { Z });
    await t.sleep(500);
    await t.kill(L);
    t.clearLinkFaults();
    cutZ();
    t.note('leader killed', { leader: L });
    const second = await lc.findLeader(15000, [S]);
    t.check('S takes over from the dead leader', second !== null, { metadata: await lc.metadata() });
    lc.leader = S;
    for (let i = 0; i < 5; i++) await produce(`b${i}`);

    await t.restart(L);
    t.check('the restarted leader rejoins the ISR', (await lc.waitIsr([S, L], 30000)) !== null, { metadata: await lc.metadata() });
    await elect(L);
    const l = await t.state(L);
    await poll(t, () => t.state(Z), { timeoutMs: 3000, everyMs: 50, done: (st) => st.logEndOffset >= l.logEndOffset });
    t.clearLinkFaults();
    t.note('the network between Z and the controller heals', { Z });
    t.check('Z rejoins the ISR', (await lc.waitIsr(lc.brokers(), 30000)) !== null, { metadata: await lc.metadata() });
    for (let i = 0; i < 3; i++) await produce(`c${i}`);

    const states = await converge(t, lc);
    t.note('brokers at the end', { states: states.map(brief) });
    const leader = states.find((st) => st.id === L);
    for (const st of states) {
      if (st.id === L) continue;
      const diff = divergence(leader, st);
      t.check("every follower holds the leader's records at every offset", diff.length === 0, { follower: st.id, diff });
    }
    t.check('every broker holds the same log', states.length === 3 && new Set(states.map((st) => st.digest)).size === 1, { states: states.map(brief) });

    await elect(Z);
    const all = await lc.consumeAll(Z);
    const keys = new Set(all.records.map((r) => r.key));
    t.check('a consumer reads every acknowledged record from Z', all.ok && [...acked].every((k) => keys.has(k)), { missing: [...acked].filter((k) => !keys.has(k)) });
    const unacked = all.records.filter((r) => r.value === 'unacked').map((r) => [r.offset, r.key]);
    t.check('a consumer reads no record that was never acknowledged', unacked.length === 0, { unacked });
  },
};
