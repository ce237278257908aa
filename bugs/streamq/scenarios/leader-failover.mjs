// leader-failover — losing the leader, electing another, and the old one catching up.
import { brief, connect, converge, missingAcked } from './lib/client.mjs';

export default {
  name: 'leader-failover',
  description:
    'Publishes through the leader, then the leader is killed: the other two elect a new leader, every ' +
    'acknowledged message is still there and new publishes succeed; the old leader is restarted and catches up ' +
    'to the same stream as the others.',
  timeoutMs: 180000,
  async run(t) {
    const sc = await connect(t, 'client-failover');
    const first = await sc.findLeader(45000);
    t.check('a leader is elected', first !== null);
    const acked = [];
    for (let i = 0; i < 25; i++) {
      const r = await sc.publish('orders.a', `a${i}`, `a-${i}`);
      t.check('publish is acknowledged', r.ok === true, { i, reply: r });
      acked.push(`a-${i}`);
    }
    await converge(t, sc, 45000);
    const old = first.id;
    await t.kill(old);
    t.note('killed the leader', { old });
    const next = await sc.findLeader(45000, t.nodes.filter((n) => n !== old));
    t.check('the survivors elect a new leader', next !== null);
    const info = await sc.request('StreamInfo', {});
    t.check('the new leader holds every acknowledged message', info.ok === true && info.state.lastSeq >= acked.length, { info });
    for (let i = 0; i < 15; i++) {
      const r = await sc.publish('orders.b', `b${i}`, `fb-${i}`);
      t.check('publishes succeed under the new leader', r.ok === true, { i, reply: r });
      acked.push(`fb-${i}`);
    }
    await t.restart(old);
    await t.waitFor((e) => e.kind === 'log' && e.node === old && e.msg === 'server started', { timeoutMs: 20000, description: 'the old leader to restart', includePast: true });
    for (let i = 0; i < 5; i++) {
      const r = await sc.publish('orders.c', `c${i}`, `fc-${i}`);
      t.check('publishes succeed after the restart', r.ok === true, { i, reply: r });
      acked.push(`fc-${i}`);
    }
    const states = await converge(t, sc, 45000);
    t.check('the restarted member caught up', states.length === 3 && new Set(states.map((s) => s.stream.hash)).size === 1, { states: states.map(brief) });
    for (const s of states) t.check('every acknowledged message is on every member', missingAcked(s, acked).length === 0, { node: s.id, missing: missingAcked(s, acked) });
  },
};
