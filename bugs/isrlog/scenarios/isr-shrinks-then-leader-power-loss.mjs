// isr-shrinks-then-leader-power-loss — two network cuts leave the leader alone in the ISR, then it loses power.
import { poll } from '../../lib/scenario-lib.mjs';
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'isr-shrinks-then-leader-power-loss',
  description:
    'Three brokers, min.insync.replicas=2, the log flushed to disk once a minute (records are only in memory until ' +
    'then). A producer writes with acks=all. A network cut isolates one follower (F1) from the leader (L), which ' +
    'drops it from the ISR; production goes on with L and the other follower (F2). A second cut isolates F2 from ' +
    'every node, and L is left alone in the ISR. L then loses power (killed before it flushed), and is restarted ' +
    'while F2 is still cut off. Once the network heals, the partition must have a leader again, production must go on, ' +
    'every acknowledged record must be readable and every broker must hold the same log.',
  timeoutMs: 180000,
  config: { minInsyncReplicas: 2, logFlushIntervalMs: 60000, hwCheckpointMs: 60000 },
  async run(t) {
    const lc = await connect(t, 'client-0');
    const first = await lc.findLeader(30000);
    t.check('a leader is elected', first !== null);
    t.check('all three brokers are in sync', (await lc.waitIsr(lc.brokers(), 30000)) !== null);
    const acked = new Set();
    const produce = async (key) => {
      const r = await lc.produce(key, `v-${key}`, { timeoutMs: 30000 });
      t.check('acks=all produce is acknowledged', r.ok === true, { key, reply: r });
      acked.add(key);
    };
    for (let i = 0; i < 5; i++) await produce(`a${i}`);

    const L = first.leader;
    const [F1, F2] = lc.brokers().filter((b) => b !== L);
    const cut = (a, b) => {
      t.addLinkFault({ from: a, to: b, drop: 1 });
      t.addLinkFault({ from: b, to: a, drop: 1 });
    };
    cut(F1, L);
    t.note('the network between F1 and the leader is cut', { leader: L, F1 });
    t.check('the leader drops F1 from the ISR', (await lc.waitIsr([L, F2], 20000)) !== null, { metadata: await lc.metadata() });
    for (let i = 0; i < 5; i++) await produce(`b${i}`);

    for (const n of [L, F1, 'controller']) cut(F2, n);
    t.note('F2 is cut off from every node', { F2 });
    t.check('the leader is left alone in the ISR', (await lc.waitIsr([L], 20000)) !== null, { metadata: await lc.metadata() });
    const gone = (b) => poll(t, () => lc.metadata(), { timeoutMs: 15000, everyMs: 100, done: (m) => m.ok && !m.liveBrokers.includes(b) });
    t.check("the controller expires F2's session", (await gone(F2)).ok);

    const l = await t.state(L);
    t.check('the leader flushes its log once a minute, not at every append', l.recoveryPoint < l.logEndOffset, { leader: brief(l), recoveryPoint: l.recoveryPoint });
    await t.kill(L);
    t.note('the leader loses power', { leader: L });
    t.check("the controller expires the leader's session", (await gone(L)).ok);
    await t.restart(L);
    t.note('the leader is back; F2 is still cut off', { leader: L });
    await t.sleep(3000);
    t.note('before the network heals', { metadata: await lc.metadata() });

    t.clearLinkFaults();
    t.note('the network heals');
    const back = await lc.findLeader(30000);
    t.check('the partition has a leader again', back !== null, { metadata: await lc.metadata() });
    for (let i = 0; i < 3; i++) await produce(`c${i}`);
    t.check('every broker rejoins the ISR', (await lc.waitIsr(lc.brokers(), 30000)) !== null, { metadata: await lc.metadata() });

    const states = await converge(t, lc);
    t.note('brokers at the end', { states: states.map(brief) });
    const all = await lc.consumeAll();
    const keys = new Set(all.records.map((r) => r.key));
    t.check('a consumer reads every acknowledged record', all.ok && [...acked].every((k) => keys.has(k)), { missing: [...acked].filter((k) => !keys.has(k)) });
    t.check('every broker holds the same log', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
  },
};
