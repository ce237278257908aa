// reassignment — replicas removed from the partition and added back.
import { poll } from '../../lib/scenario-lib.mjs';
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'reassignment',
  description:
    'An admin removes a follower from the partition\'s replicas: it stops and deletes its copy, and stays stopped ' +
    'while acks=all produces go on with two replicas. It is added back, copies the log from the leader and rejoins ' +
    'the ISR. Then the leader itself is removed: another in-sync replica takes over, the old leader stops and ' +
    'deletes its copy, and once added back catches up. Every acknowledged record is read back and every broker ' +
    'holds the same log.',
  timeoutMs: 150000,
  async run(t) {
    const lc = await connect(t, 'client-reassign');
    const first = await lc.findLeader(30000);
    t.check('a leader is elected', first !== null);
    t.check('all three brokers are in sync', (await lc.waitIsr(lc.brokers(), 30000)) !== null);
    const acked = [];
    const produce = async (key) => {
      const r = await lc.produce(key, `v-${key}`, { timeoutMs: 15000 });
      t.check('acks=all produce is acknowledged', r.ok === true, { key, reply: r });
      acked.push(key);
    };
    const stopped = async (node, timeoutMs) => {
      const r = await poll(t, () => t.state(node), { timeoutMs, everyMs: 50, done: (s) => s && s.role === 'none' && s.logEndOffset === 0 });
      return r.ok;
    };
    const moveOutAndBack = async (node, round) => {
      const rest = lc.brokers().filter((b) => b !== node);
      const out = await lc.reassign(rest);
      t.check('the replica is removed', out.ok === true && out.replicas.join() === rest.join(), { node, out });
      t.check('the removed replica stops and deletes its copy', await stopped(node, 5000), { node, state: brief(await t.state(node)) });
      t.check('a leader among the remaining replicas serves', (await lc.findLeader(10000, rest)) !== null);
      for (let i = 0; i < 5; i++) await produce(`${round}-out-${i}`);
      await t.sleep(4000);
      t.check('the removed replica stays stopped', await stopped(node, 0), { node, state: brief(await t.state(node)) });
      const back = await lc.reassign(lc.brokers());
      t.check('the replica is added back', back.ok === true && back.replicas.length === 3, { node, back });
      for (let i = 0; i < 5; i++) await produce(`${round}-back-${i}`);
      t.check('the replica rejoins the ISR', (await lc.waitIsr(lc.brokers(), 20000)) !== null, { node, metadata: await lc.metadata() });
    };

    for (let i = 0; i < 5; i++) await produce(`a${i}`);
    await moveOutAndBack(lc.brokers().find((b) => b !== first.leader), 'follower');
    await moveOutAndBack((await lc.findLeader(10000)).leader, 'leader');

    const all = await lc.consumeAll();
    t.check('a consumer reads every acknowledged record in order', all.ok && all.records.map((r) => r.key).join() === acked.join(), { read: all.records.map((r) => r.key) });
    const states = await converge(t, lc);
    t.note('brokers at the end', { states: states.map(brief) });
    t.check('every broker holds the same log', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
  },
};
