// peer-remove-restart — the last server of a shrunk group restarts.
import { connect, converge, missingAcked } from './lib/client.mjs';

export default {
  name: 'peer-remove-restart',
  description:
    'Publishes through the leader, then kills one follower and peer-removes it, and peer-removes the other ' +
    'follower and shuts it down (retired): the leader goes on alone. Then the leader\'s server is restarted. ' +
    'It must lead its one-server group again, hold every acknowledged message and keep taking publishes.',
  timeoutMs: 180000,
  async run(t) {
    const sc = await connect(t, 'client-ops');
    const leader = await sc.findLeader(45000);
    t.check('a leader is elected', leader !== null);
    const acked = [];
    const publish = async (prefix, n, timeoutMs = 30000) => {
      for (let i = 0; i < n; i++) {
        const r = await sc.publish(`orders.${prefix}`, `${prefix}${i}`, `${prefix}-${i}`, { timeoutMs });
        t.check('publish is acknowledged', r.ok === true, { id: `${prefix}-${i}`, reply: r });
        acked.push(`${prefix}-${i}`);
      }
    };
    await publish('a', 10);
    await converge(t, sc, 45000);
    const [dead, retired] = t.nodes.filter((n) => n !== leader.id);

    await t.kill(dead);
    t.note('killed a follower', { dead });
    await publish('b', 5);
    const r1 = await sc.removePeer(dead);
    t.check('the dead server is peer-removed', r1.ok === true, { reply: r1 });
    await publish('c', 5);
    const r2 = await sc.removePeer(retired);
    t.check('the retired server is peer-removed', r2.ok === true, { reply: r2 });
    await t.kill(retired);
    t.note('shut down the retired server', { retired });
    await publish('d', 5);

    await t.kill(leader.id);
    await t.sleep(500);
    await t.restart(leader.id);
    t.note('restarted the last server', { node: leader.id });
    const back = await sc.findLeader(30000, [leader.id]);
    t.check('the restarted server leads its group again', back !== null && back.id === leader.id, { back });
    await publish('e', 5, 15000);

    const s = await t.state(leader.id);
    t.check('the server is its group\'s only member', JSON.stringify(s.members) === JSON.stringify([leader.id]), { members: s.members });
    t.check('every acknowledged message is in the stream', missingAcked(s, acked).length === 0, { missing: missingAcked(s, acked) });
  },
};
