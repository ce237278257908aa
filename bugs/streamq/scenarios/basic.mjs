// basic — the everyday behaviour of a healthy stream.
import { brief, connect, converge, missingAcked } from './lib/client.mjs';

export default {
  name: 'basic',
  description:
    'A healthy cluster: publishes through the leader are acknowledged with increasing sequences, a retried ' +
    'publish with the same msgId is stored once, followers redirect to the leader, a durable consumer fetches ' +
    'and acknowledges everything, and every member ends with the same stream.',
  timeoutMs: 180000,
  async run(t) {
    const sc = await connect(t, 'client-basic');
    const leader = await sc.findLeader(45000);
    t.check('a leader is elected', leader !== null);
    const follower = t.nodes.find((n) => n !== leader.id);
    const redirected = await sc.send(follower, 'Publish', { subject: 'orders.x', data: 'x', msgId: 'probe' });
    t.check('a follower refuses a publish and names the leader', redirected.ok === true || (redirected.error === 'not leader' && typeof redirected.leader === 'string'), { reply: redirected });

    const acked = [];
    let lastSeq = 0;
    for (let i = 0; i < 30; i++) {
      const r = await sc.publish(`orders.${i % 3}`, `m${i}`, `b-${i}`);
      t.check('publish is acknowledged with a higher sequence', r.ok === true && r.seq > lastSeq, { i, reply: r });
      lastSeq = r.seq;
      acked.push(`b-${i}`);
    }
    const dup = await sc.publish('orders.0', 'm0', 'b-0');
    t.check('a retried publish is a duplicate of the first', dup.ok === true && dup.duplicate === true, { dup });
    const info = await sc.request('StreamInfo', {});
    t.check('stream info counts every message once', info.ok === true && info.state.lastSeq === lastSeq, { info });

    let got = 0;
    for (let i = 0; i < 10 && got < 30; i++) {
      const f = await sc.request('Fetch', { durable: 'worker', batch: 8 });
      t.check('fetch succeeds', f.ok === true, { f });
      got += f.msgs.length;
      if (f.msgs.length) {
        const a = await sc.request('Ack', { durable: 'worker', seq: f.msgs[f.msgs.length - 1].seq });
        t.check('ack is accepted', a.ok === true, { a });
      }
    }
    const ci = await sc.request('ConsumerInfo', { durable: 'worker' });
    t.check('the consumer delivered and acknowledged everything', ci.ok === true && ci.delivered === lastSeq && ci.ackFloor === lastSeq, { ci, lastSeq });

    const states = await converge(t, sc, 45000);
    t.check('all members applied the same stream', states.length === 3 && new Set(states.map((s) => s.stream.hash)).size === 1, { states: states.map(brief) });
    for (const s of states) t.check('every acknowledged message is on every member', missingAcked(s, acked).length === 0, { node: s.id, missing: missingAcked(s, acked) });
  },
};
