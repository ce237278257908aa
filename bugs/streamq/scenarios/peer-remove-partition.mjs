// peer-remove-partition — an operator peer-removes the servers a leader cannot reach while one is down and the other cut off.
import { brief, connect, converge, missingAcked } from './lib/client.mjs';

export default {
  name: 'peer-remove-partition',
  description:
    'After some publishes, one follower is killed and the other is cut off from the leader. An operator script ' +
    'peer-removes both unreachable servers through the leader, and a publisher on the leader\'s side keeps ' +
    'publishing to it. The killed server is restarted on the far side, where a publisher carries on too. When ' +
    'the network heals, every member must hold the same stream with every acknowledged message.',
  timeoutMs: 180000,
  async run(t) {
    const sc = await connect(t, 'client-main');
    const ops = await connect(t, 'client-ops');
    const near = await connect(t, 'client-near');
    const leader = await sc.findLeader(45000);
    t.check('a leader is elected', leader !== null);
    const acked = [];
    for (let i = 0; i < 10; i++) {
      const r = await sc.publish('orders.a', `a${i}`, `a-${i}`);
      t.check('publish is acknowledged', r.ok === true, { i, reply: r });
      acked.push(`a-${i}`);
    }
    await converge(t, sc, 45000);
    const lead = (await sc.findLeader(45000)).id;
    const [down, cut] = t.nodes.filter((n) => n !== lead);

    await t.kill(down);
    t.partition([[lead, 'client-ops', 'client-near'], [down, cut, 'client-main']]);
    t.note('killed one follower and cut off the other', { lead, down, cut });
    const removals = await Promise.all([down, cut].map((peer) => ops.send(lead, 'PeerRemove', { peer }, 2500)));
    t.note('peer-remove replies', { removals });

    for (let i = 0; i < 5; i++) {
      const id = `near-${i}`;
      const r = await near.send(lead, 'Publish', { subject: 'orders.near', data: id, msgId: id }, 800);
      if (r.ok === true) acked.push(id);
    }

    await t.restart(down);
    await t.waitFor((e) => e.kind === 'log' && e.node === down && e.msg === 'server started', { timeoutMs: 20000, description: 'the killed server to restart', includePast: true });
    const far = await sc.findLeader(45000, [down, cut]);
    t.check('the far side elects a leader', far !== null);
    for (let i = 0; i < 10; i++) {
      const r = await sc.publish('orders.b', `b${i}`, `b-${i}`);
      t.check('publishes succeed on the far side', r.ok === true, { i, reply: r });
      acked.push(`b-${i}`);
    }

    t.heal();
    t.note('healed the partition');
    await t.sleep(3000);
    for (let i = 0; i < 5; i++) {
      const r = await sc.publish('orders.c', `c${i}`, `c-${i}`);
      t.check('publishes succeed after the heal', r.ok === true, { i, reply: r });
      acked.push(`c-${i}`);
    }
    const states = await converge(t, sc, 30000);
    t.check('every member holds the same stream', states.length === 3 && new Set(states.map((s) => s.stream.hash)).size === 1, { states: states.map(brief) });
    for (const s of states) t.check('every acknowledged message is on every member', missingAcked(s, acked).length === 0, { node: s.id, missing: missingAcked(s, acked) });
  },
};
