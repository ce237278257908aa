// dedupe — msg IDs: duplicates in flight, retries across a leader failover, and the duplicate window.
import { brief, connect, converge, missingAcked } from './lib/client.mjs';

const WINDOW_MS = 15000;

export default {
  name: 'dedupe',
  description:
    'Publishes with msg IDs: the same message sent twice at once is stored once; the leader is killed and every ' +
    'acknowledged message retried on the new leader is answered as a duplicate with its first sequence; the old ' +
    'leader rejoins with the same stream; once the duplicate window has passed, a msg ID is accepted again as a new message.',
  timeoutMs: 180000,
  config: { duplicateWindowMs: WINDOW_MS },
  async run(t) {
    const sc = await connect(t, 'client-dedupe');
    const first = await sc.findLeader(45000);
    t.check('a leader is elected', first !== null);
    /** @type {Map<string, number>} msg ID to the sequence it was acknowledged with */
    const seqs = new Map();
    for (let i = 0; i < 10; i++) {
      const r = await sc.publish('orders.d', `d${i}`, `d-${i}`);
      t.check('publish is acknowledged', r.ok === true && r.duplicate === false, { i, reply: r });
      seqs.set(`d-${i}`, r.seq);
    }
    // The same message twice at once, as a publisher that retries before the first answer.
    for (let i = 0; i < 5; i++) {
      const id = `c-${i}`;
      const leader = (await sc.findLeader(45000))?.id ?? first.id;
      const both = await Promise.all([0, 1].map(() => sc.send(leader, 'Publish', { subject: 'orders.c', data: id, msgId: id })));
      t.check('two publishes of one msg ID at once store it at most once', both.filter((r) => r.ok && r.duplicate === false).length <= 1, { both });
      const r = await sc.publish('orders.c', id, id);
      t.check('a publish answered as a duplicate names a stored sequence', r.ok === true && r.seq > 0, { reply: r });
      seqs.set(id, r.seq);
    }

    const old = (await sc.findLeader(45000))?.id ?? first.id;
    await t.kill(old);
    t.note('killed the leader', { old });
    const next = await sc.findLeader(45000, t.nodes.filter((n) => n !== old));
    t.check('the survivors elect a new leader', next !== null);
    for (const [id, seq] of seqs) {
      const r = await sc.publish(id.startsWith('c-') ? 'orders.c' : 'orders.d', id, id);
      t.check('a retried message is answered as a duplicate of its first sequence', r.ok === true && r.duplicate === true && r.seq === seq, { id, seq, reply: r });
    }
    await t.restart(old);
    await t.waitFor((e) => e.kind === 'log' && e.node === old && e.msg === 'server started', { timeoutMs: 20000, description: 'the old leader to restart', includePast: true });

    await t.sleep(WINDOW_MS + 1000);
    const again = await sc.publish('orders.d', 'again', 'd-0');
    t.check('past the duplicate window a msg ID is a new message', again.ok === true && again.duplicate === false && again.seq > Math.max(...seqs.values()), { reply: again });

    const states = await converge(t, sc, 45000);
    t.note('members at the end', { states: states.map(brief) });
    const acked = [...seqs.keys()];
    for (const s of states) {
      t.check('every acknowledged message is on every member', missingAcked(s, acked).length === 0, { node: s.id, missing: missingAcked(s, acked) });
      const counts = new Map();
      for (const id of s.msgIds ?? []) counts.set(id, (counts.get(id) ?? 0) + 1);
      const twice = acked.filter((id) => (counts.get(id) ?? 0) !== (id === 'd-0' ? 2 : 1));
      t.check('each message is stored once (d-0 once more after the window)', twice.length === 0, { node: s.id, twice });
    }
    t.check('all members hold the same stream', states.length === 3 && new Set(states.map((s) => s.stream.hash)).size === 1, { states: states.map(brief) });
  },
};
