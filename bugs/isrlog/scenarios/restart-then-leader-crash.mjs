// restart-then-leader-crash — both replicas of a partition lose power; one comes straight back, the other does not.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'restart-then-leader-crash',
  description:
    'A partition with two replicas (b1, b2; b3 holds no replica) takes twenty acks=all produces. Right after the ' +
    'last acknowledgement the follower\'s fetches are lost while three more produces reach the leader; then both replicas are killed, and the follower is restarted at once while the old leader stays ' +
    'down; the controller notices the leader is gone only when its session (15 s) expires and then elects the ' +
    'restarted broker. Every acknowledged record must still be readable; production must go on; once the old leader ' +
    'is back, both replicas must hold the same log.',
  timeoutMs: 150000,
  // The session outlasts a restart on any backend (a container takes seconds to start) so the follower is back first.
  config: { replicas: ['b1', 'b2'], sessionTimeoutMs: 15000 },
  async run(t) {
    const lc = await connect(t, 'client-0');
    const first = await lc.findLeader(30000);
    t.check('a leader is elected', first !== null);
    t.check('both replicas are in sync', (await lc.waitIsr(['b1', 'b2'], 30000)) !== null);
    const L = first.leader;
    const F = L === 'b1' ? 'b2' : 'b1';
    const acked = [];
    for (let i = 0; i < 20; i++) {
      const r = await lc.produce(`m${i}`, `v${i}`);
      t.check('acks=all produce is acknowledged', r.ok === true, { reply: r });
      acked.push(`m${i}`);
    }
    // A few more produces reach the leader but not the follower (its fetches are lost) before the power cut.
    t.addLinkFault({ from: F, to: L, type: 'Fetch', drop: 1 });
    for (let i = 0; i < 3; i++) void lc.send(L, 'Produce', { key: `x${i}`, value: 'never-acknowledged' }, 500);
    await t.sleep(100);
    await Promise.all([t.kill(L), t.kill(F)]);
    t.clearLinkFaults();
    t.note('both replicas killed right after the last acknowledgement', { leader: L, follower: F });
    await t.restart(F);
    t.note('the follower is back; the old leader stays down', { follower: F });

    const second = await lc.findLeader(30000, [F]);
    t.check('the restarted broker becomes leader', second !== null, { metadata: await lc.metadata() });
    const read = await lc.consumeAll(F);
    const keys = new Set(read.records.map((r) => r.key));
    const missing = acked.filter((k) => !keys.has(k));
    t.note('records readable from the new leader', { count: read.records.length, highWatermark: read.highWatermark ?? null });
    t.check('every acknowledged record is readable after the failover', read.ok && missing.length === 0, { missing, state: brief(await t.state(F)) });

    for (let i = 0; i < 5; i++) {
      const r = await lc.produce(`n${i}`, `v${i}`);
      t.check('produce after the failover is acknowledged', r.ok === true, { reply: r });
      acked.push(`n${i}`);
    }
    await t.restart(L);
    t.check('the old leader rejoins the ISR', (await lc.waitIsr(['b1', 'b2'], 30000)) !== null, { metadata: await lc.metadata() });
    const states = (await converge(t, lc)).filter((s) => s.id === 'b1' || s.id === 'b2');
    t.note('replicas at the end', { states: states.map(brief) });
    t.check('both replicas hold the same log', states.length === 2 && states[0].digest === states[1].digest, { states: states.map(brief) });
  },
};
