// replica-moved-out-and-back — a replica is removed and quickly added back while the removal's StopReplica is slow.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'replica-moved-out-and-back',
  description:
    'With all three brokers in sync, an admin removes a follower (R) from the partition\'s replicas and, a moment ' +
    'later, adds it back; the controller\'s StopReplica request to R is held up for 3 s on the way. The producer ' +
    'goes on writing. After the held-up request has arrived, every replica must be back in the ISR and hold the ' +
    'leader\'s log.',
  timeoutMs: 120000,
  async run(t) {
    const lc = await connect(t, 'client-0');
    const first = await lc.findLeader(30000);
    t.check('a leader is elected', first !== null);
    t.check('all three brokers are in sync', (await lc.waitIsr(lc.brokers(), 30000)) !== null);
    const acked = [];
    const produce = async (key) => {
      const r = await lc.produce(key, `v-${key}`, { timeoutMs: 15000 });
      t.check('acks=all produce is acknowledged', r.ok === true, { key, reply: r });
      acked.push(key);
    };
    for (let i = 0; i < 5; i++) await produce(`a${i}`);

    const R = lc.brokers().find((b) => b !== first.leader);
    t.addLinkFault({ from: 'controller', to: R, type: 'StopReplica', delayMs: [3000, 3000] });
    const out = await lc.reassign(lc.brokers().filter((b) => b !== R));
    t.check('R is removed from the replicas', out.ok === true && !out.replicas.includes(R), { out });
    for (let i = 0; i < 3; i++) await produce(`b${i}`);
    const back = await lc.reassign(lc.brokers());
    t.check('R is added back', back.ok === true && back.replicas.includes(R), { back });
    t.check('R rejoins the ISR', (await lc.waitIsr(lc.brokers(), 10000)) !== null, { metadata: await lc.metadata() });
    await t.sleep(4000);
    t.clearLinkFaults();
    for (let i = 0; i < 5; i++) await produce(`c${i}`);

    const isr = await lc.waitIsr(lc.brokers(), 10000);
    t.check('every replica is in the ISR after the held-up request', isr !== null, { metadata: await lc.metadata(), r: brief(await t.state(R)) });
    const states = await converge(t, lc, 10000);
    t.note('brokers at the end', { states: states.map(brief) });
    t.check('every broker holds the same log', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
    const all = await lc.consumeAll();
    t.check('a consumer reads every acknowledged record', all.ok && acked.every((k) => all.records.some((r) => r.key === k)), { read: all.records.map((r) => r.key) });
  },
};
