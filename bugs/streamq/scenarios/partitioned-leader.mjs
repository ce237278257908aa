// partitioned-leader — a leader is cut off with publishes in flight, the others move on, then it rejoins.
import { brief, connect, converge, missingAcked } from './lib/client.mjs';

export default {
  name: 'partitioned-leader',
  description:
    'The leader is partitioned from the other two members just as a publisher sends it a few messages (they ' +
    'cannot be acknowledged). The other two elect a new leader and take more publishes. Once the cut-off leader ' +
    'has stepped down for want of a quorum, the partition heals: the ' +
    'old leader must end with exactly the stream of the others, holding every acknowledged message and none ' +
    'that was never acknowledged.',
  timeoutMs: 180000,
  async run(t) {
    const sc = await connect(t, 'client-main');
    const stray = await connect(t, 'client-stray');
    const first = await sc.findLeader(45000);
    t.check('a leader is elected', first !== null);
    const acked = [];
    for (let i = 0; i < 10; i++) {
      const r = await sc.publish('orders.a', `a${i}`, `a-${i}`);
      t.check('publish is acknowledged', r.ok === true, { i, reply: r });
      acked.push(`a-${i}`);
    }
    await converge(t, sc, 45000);
    // Cut off whoever leads right now, right after it took a publish; try again if it had lost the lead.
    let old = null;
    let rest = [];
    const unacked = [];
    for (let attempt = 0; attempt < 4 && old === null; attempt++) {
      const leader = await sc.findLeader(45000);
      t.check('a leader is elected', leader !== null);
      const pre = await sc.send(leader.id, 'Publish', { subject: 'orders.a', data: `p${attempt}`, msgId: `pre-${attempt}` }, 3000);
      if (pre.ok !== true) continue;
      acked.push(`pre-${attempt}`);
      rest = t.nodes.filter((n) => n !== leader.id);
      t.partition([[leader.id, 'client-stray'], [...rest, 'client-main']]);
      t.note('partitioned the leader', { leader: leader.id, rest });
      const ids = [0, 1, 2].map((i) => `stray-${attempt}-${i}`);
      await Promise.all(
        ids.map(async (id) => {
          const r = await stray.send(leader.id, 'Publish', { subject: 'orders.stray', data: id, msgId: id }, 600);
          t.check('a publish to the cut-off leader is not acknowledged', r.ok !== true, { reply: r });
        }),
      );
      const cut = await t.state(leader.id).catch(() => null);
      if (cut && cut.pindex > cut.commit) {
        old = leader.id;
        unacked.push(...ids);
      } else {
        t.note('the cut-off member was no longer leading; trying again', { state: brief(cut) });
        t.heal();
        await t.sleep(500);
      }
    }
    t.check('a leader was cut off holding unacknowledged entries', old !== null);
    const next = await sc.findLeader(45000, rest);
    t.check('the majority elects a new leader', next !== null);
    for (let i = 0; i < 12; i++) {
      const r = await sc.publish('orders.b', `b${i}`, `b-${i}`);
      t.check('publishes succeed on the majority side', r.ok === true, { i, reply: r });
      acked.push(`b-${i}`);
    }
    // The cut-off member gives up the lead once it has not heard a quorum for an election timeout; heal then.
    const cut = await t.until(
      async () => {
        const s = await t.state(old).catch(() => null);
        return s && s.role !== 'LEADER' ? s : null;
      },
      { timeoutMs: 20000, everyMs: 50, description: 'the cut-off leader to step down' },
    );
    t.heal();
    t.note('healed the partition', { old: brief(cut) });
    await t.sleep(400);
    for (let i = 0; i < 5; i++) {
      const r = await sc.publish('orders.c', `c${i}`, `c-${i}`);
      t.check('publishes succeed after the heal', r.ok === true, { i, reply: r });
      acked.push(`c-${i}`);
    }
    const states = await converge(t, sc, 45000);
    t.note('members after the heal', { states: states.map(brief) });
    for (const s of states) {
      const missing = missingAcked(s, acked);
      const strays = (s.msgIds ?? []).filter((id) => unacked.includes(id));
      t.check('every acknowledged message is on every member', missing.length === 0, { node: s.id, missing });
      t.check('no member holds a message that was never acknowledged', strays.length === 0, { node: s.id, strays });
    }
    t.check('all members hold the same stream', states.length === 3 && new Set(states.map((s) => s.stream.hash)).size === 1, { states: states.map(brief) });
  },
};
