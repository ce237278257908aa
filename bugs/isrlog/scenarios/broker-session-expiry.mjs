// broker-session-expiry — a follower loses its session with the controller for a while and comes back.
import { poll } from '../../lib/scenario-lib.mjs';
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'broker-session-expiry',
  description:
    'A producer writes with acks=all. The network between one follower (F) and the controller is cut for longer ' +
    'than the session timeout while F still reaches the brokers: the controller expires its session, and ' +
    'production goes on. The network heals; F must re-register, rejoin the ISR and hold the ' +
    "leader's log, and a consumer must read every acknowledged record.",
  timeoutMs: 120000,
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

    const F = lc.brokers().find((b) => b !== first.leader);
    t.addLinkFault({ from: F, to: 'controller', drop: 1 });
    t.addLinkFault({ from: 'controller', to: F, drop: 1 });
    t.note('the network between F and the controller is cut', { F });
    const expired = await poll(t, () => lc.metadata(), { timeoutMs: 15000, everyMs: 100, done: (m) => m.ok && !m.liveBrokers.includes(F) });
    t.check("the controller expires F's session", expired.ok, { metadata: expired.value });
    for (let i = 0; i < 5; i++) await produce(`b${i}`);
    t.clearLinkFaults();
    t.note('the network heals', { F });
    for (let i = 0; i < 3; i++) await produce(`c${i}`);
    t.check('F rejoins the ISR', (await lc.waitIsr(lc.brokers(), 30000)) !== null, { metadata: await lc.metadata() });

    const states = await converge(t, lc);
    t.note('brokers at the end', { states: states.map(brief) });
    t.check('every broker holds the same log', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
    const all = await lc.consumeAll();
    const keys = new Set(all.records.map((r) => r.key));
    t.check('a consumer reads every acknowledged record', all.ok && [...acked].every((k) => keys.has(k)), { missing: [...acked].filter((k) => !keys.has(k)) });
  },
};
