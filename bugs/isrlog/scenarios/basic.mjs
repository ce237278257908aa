// basic — the everyday behaviour of a healthy cluster.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'basic',
  description:
    'The controller elects a leader with all three brokers in sync; acks=all produces are acknowledged and a ' +
    'consumer reads them back in order up to the high watermark. An admin moves leadership to another in-sync ' +
    'broker twice, with produces in between; every broker ends with the same log.',
  timeoutMs: 150000,
  async run(t) {
    const lc = await connect(t, 'client-basic');
    const first = await lc.findLeader(30000);
    t.check('a leader is elected', first !== null);
    const full = await lc.waitIsr(lc.brokers(), 30000);
    t.check('all three brokers are in sync', full !== null);
    const acked = [];
    const produce = async (key) => {
      const r = await lc.produce(key, `v-${key}`);
      t.check('acks=all produce is acknowledged', r.ok === true, { key, reply: r });
      acked.push(key);
    };
    for (let i = 0; i < 10; i++) await produce(`a${i}`);
    const read = await lc.consumeAll();
    t.check('a consumer reads every acknowledged record in order', read.ok && read.records.map((r) => r.key).join() === acked.join(), { read: read.records.map((r) => r.key) });

    let leader = first.leader;
    for (let round = 0; round < 2; round++) {
      const target = lc.brokers().find((b) => b !== leader);
      const e = await lc.send('controller', 'ElectLeaders', { broker: target });
      t.check('leadership moves to another in-sync broker', e.ok === true && e.leader === target, { e });
      const now = await lc.findLeader(10000);
      t.check('the new leader serves', now !== null && now.leader === target);
      leader = target;
      for (let i = 0; i < 5; i++) await produce(`r${round}-${i}`);
    }
    const all = await lc.consumeAll();
    t.check('a consumer reads every acknowledged record after the moves', all.ok && all.records.map((r) => r.key).join() === acked.join(), { read: all.records.map((r) => r.key) });
    const states = await converge(t, lc);
    t.note('brokers at the end', { states: states.map(brief) });
    t.check('every broker holds the same log', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
  },
};
