// slow-commit-retry — a publisher with a short timeout retries while its first publish is still being committed.
import { brief, connect, converge } from './lib/client.mjs';

const TRY_MS = 250;

export default {
  name: 'slow-commit-retry',
  description:
    'The followers\' answers to the leader are slowed down, so committing a publish takes longer than the ' +
    'publisher\'s timeout. The publisher sends eight messages, each with a msg ID, and retries each with the same ' +
    'msg ID until it is acknowledged. Every acknowledgement must name the stream sequence of that message, and ' +
    'every message must be stored once.',
  timeoutMs: 180000,
  async run(t) {
    const sc = await connect(t, 'client-slow');
    const first = await sc.findLeader(45000);
    t.check('a leader is elected', first !== null);
    for (let i = 0; i < 5; i++) {
      const r = await sc.publish('orders.a', `a${i}`, `a-${i}`);
      t.check('publish is acknowledged', r.ok === true, { i, reply: r });
    }
    await converge(t, sc, 45000);

    const leader = first.id;
    for (const n of t.nodes.filter((x) => x !== leader)) t.addLinkFault({ from: n, to: leader, type: 'AppendEntryResponse', delayMs: [600, 600] });
    /** @type {Map<string, any>} msg ID to the reply that acknowledged it */
    const acks = new Map();
    for (let i = 0; i < 8; i++) {
      const id = `r-${i}`;
      for (let attempt = 0; attempt < 40 && !acks.has(id); attempt++) {
        const r = await sc.send(leader, 'Publish', { subject: 'orders.r', data: id, msgId: id }, TRY_MS);
        if (r.ok) acks.set(id, r);
        else if (r.error !== 'timeout' && r.error !== 'duplicate message conflict') t.check('a retried publish gets an acknowledgement, a timeout or a conflict', false, { id, reply: r });
        else await t.sleep(50);
      }
      t.check('the publish is acknowledged after retries', acks.has(id), { id });
    }
    t.clearLinkFaults();

    const states = await converge(t, sc, 45000);
    t.note('members at the end', { states: states.map(brief) });
    const lead = states.find((s) => s.id === leader) ?? states[0];
    for (const [id, r] of acks) {
      const at = r.seq > 0 ? (lead.msgIds ?? [])[r.seq - 1] : null;
      t.check('an acknowledgement names the sequence its message is stored at', at === id, { id, reply: r, storedThere: at ?? null });
    }
    for (const s of states) {
      const twice = [...acks.keys()].filter((id) => (s.msgIds ?? []).filter((m) => m === id).length !== 1);
      t.check('each acknowledged message is stored once', twice.length === 0, { node: s.id, twice });
    }
    t.check('all members hold the same stream', states.length === 3 && new Set(states.map((s) => s.stream.hash)).size === 1, { states: states.map(brief) });
  },
};
