// peer-remove — shrinking the stream's group one server at a time, as an operator removes dead or retired servers.
import { connect, converge, missingAcked } from './lib/client.mjs';

export default {
  name: 'peer-remove',
  description:
    'Publishes through the leader, then kills one follower and peer-removes it: the leader and the remaining ' +
    'follower keep taking publishes. Then the remaining follower (still running) is peer-removed as well: the ' +
    'leader goes on alone, acknowledging publishes, and the removed server, which keeps calling elections, does ' +
    'not disturb it. Every acknowledged message is in the leader\'s stream.',
  timeoutMs: 180000,
  async run(t) {
    const sc = await connect(t, 'client-ops');
    const leader = await sc.findLeader(45000);
    t.check('a leader is elected', leader !== null);
    const acked = [];
    const publish = async (prefix, n) => {
      for (let i = 0; i < n; i++) {
        const r = await sc.publish(`orders.${prefix}`, `${prefix}${i}`, `${prefix}-${i}`);
        t.check('publish is acknowledged', r.ok === true, { id: `${prefix}-${i}`, reply: r });
        acked.push(`${prefix}-${i}`);
      }
    };
    await publish('a', 10);
    await converge(t, sc, 45000);
    const [dead, retired] = t.nodes.filter((n) => n !== leader.id);

    await t.kill(dead);
    t.note('killed a follower', { dead });
    // The operator notices the dead server a little later; the group goes on meanwhile.
    await publish('k', 5);
    await t.sleep(5000);
    const r1 = await sc.removePeer(dead);
    t.check('the dead server is peer-removed', r1.ok === true, { reply: r1 });
    await publish('b', 10);

    const r2 = await sc.removePeer(retired);
    t.check('the second server is peer-removed', r2.ok === true, { reply: r2 });
    await publish('c', 10);
    // The removed server times out and campaigns; the leader must keep leading.
    await t.sleep(6000);
    await publish('d', 5);

    const s = await t.state(leader.id);
    t.check('the leader is its group\'s only member', JSON.stringify(s.members) === JSON.stringify([leader.id]), { members: s.members });
    t.check('the leader still leads', s.role === 'LEADER', { role: s.role, term: s.term });
    t.check('every acknowledged message is in the leader\'s stream', missingAcked(s, acked).length === 0, { missing: missingAcked(s, acked) });
  },
};
