// publish-retry — a publish is lost with a leader change; leadership later moves back; the publisher retries it.
import { brief, connect, converge, missingAcked } from './lib/client.mjs';

export default {
  name: 'publish-retry',
  description:
    'Ten messages are published. Then the leader\'s replication traffic is lost while a publisher sends it one ' +
    'more message (with a msg ID): the publish is not acknowledged and the other two members elect a new leader. ' +
    'The network recovers, leadership is moved back to the first leader with stream leader step-downs, and the ' +
    'publisher retries the lost message with the same msg ID: the retry must be stored, once, on every member.',
  timeoutMs: 180000,
  async run(t) {
    const sc = await connect(t, 'client-pub');
    const first = await sc.findLeader(45000);
    t.check('a leader is elected', first !== null);
    const acked = [];
    for (let i = 0; i < 10; i++) {
      const r = await sc.publish('orders.a', `a${i}`, `a-${i}`);
      t.check('publish is acknowledged', r.ok === true, { i, reply: r });
      acked.push(`a-${i}`);
    }
    await converge(t, sc, 45000);

    const old = first.id;
    const rest = t.nodes.filter((n) => n !== old);
    for (const n of rest) t.addLinkFault({ from: old, to: n, type: 'AppendEntry', drop: 1 });
    const lost = await sc.send(old, 'Publish', { subject: 'orders.x', data: 'x', msgId: 'order-x' }, 3000);
    t.check('the publish sent while replication is down is not acknowledged', lost.ok !== true, { reply: lost });
    const next = await sc.findLeader(45000, rest);
    t.check('the other members elect a new leader', next !== null);
    t.clearLinkFaults();
    t.note('replication is back', { old, next: next?.id ?? null });
    await converge(t, sc, 45000);

    // Move leadership back to the first leader, as a rolling restart or a placement change would.
    let leader = await sc.findLeader(45000);
    for (let i = 0; i < 16 && leader !== null && leader.id !== old; i++) {
      const r = await sc.send(leader.id, 'StepDown', {});
      t.check('a leader accepts a step-down', r.ok === true || r.error === 'not leader', { reply: r });
      await t.until(async () => (await sc.findLeader(5000))?.id !== leader.id || null, { timeoutMs: 30000, everyMs: 100, description: 'another leader after the step-down' });
      leader = await sc.findLeader(45000);
    }
    t.check('leadership is back on the first leader', leader?.id === old, { leader: leader?.id ?? null, old });

    const retried = await sc.publish('orders.x', 'x', 'order-x', { timeoutMs: 20000 });
    t.check('the retried publish is stored', retried.ok === true && retried.duplicate === false, { reply: retried });
    acked.push('order-x');
    const r = await sc.publish('orders.b', 'b', 'b-0');
    t.check('a later publish is acknowledged', r.ok === true, { reply: r });
    acked.push('b-0');

    const states = await converge(t, sc, 45000);
    t.note('members at the end', { states: states.map(brief) });
    for (const s of states) {
      t.check('every acknowledged message is on every member', missingAcked(s, acked).length === 0, { node: s.id, missing: missingAcked(s, acked) });
      const copies = (s.msgIds ?? []).filter((id) => id === 'order-x').length;
      t.check('the retried message is stored once', copies === 1, { node: s.id, copies });
    }
    t.check('all members hold the same stream', states.length === 3 && new Set(states.map((s) => s.stream.hash)).size === 1, { states: states.map(brief) });
  },
};
