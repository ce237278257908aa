// power-loss — every member loses power at once, right after a burst of acknowledged publishes.
import { brief, connect, converge, missingAcked } from './lib/client.mjs';

export default {
  name: 'power-loss',
  description:
    'Two publishers keep sending messages, each after the PubAck of the one before. Once 16 are acknowledged, ' +
    'while the publishers are still busy, every member is killed at the same moment (a power loss for the whole cluster) and restarted. Once a leader is back, every message that ' +
    'was acknowledged before the power loss must be in the stream on every member, and new publishes must succeed.',
  timeoutMs: 180000,
  config: { syncIntervalMs: 120000 },
  async run(t) {
    const a = await connect(t, 'client-a');
    const b = await connect(t, 'client-b');
    const leader = await a.findLeader(45000);
    t.check('a leader is elected', leader !== null);
    const acked = [];
    let running = true;
    const publisher = async (c, p) => {
      for (let i = 0; running && i < 300; i++) {
        const r = await c.publish(`orders.${p}`, `${p}${i}`, `${p}-${i}`, { timeoutMs: 3000 });
        if (!running) break;
        if (r.ok) acked.push(`${p}-${i}`);
      }
    };
    const publishers = [publisher(a, 'a'), publisher(b, 'b')];
    await t.until(() => acked.length >= 16, { timeoutMs: 60000, everyMs: 20, description: '16 publishes to be acknowledged' });

    // Power loss in the middle of the stream of publishes.
    running = false;
    t.note('power loss', { acked: acked.length });
    await Promise.all(t.nodes.map((n) => t.kill(n)));
    await Promise.all(publishers);
    await t.sleep(200);
    await Promise.all(t.nodes.map((n) => t.restart(n)));

    const back = await a.findLeader(45000);
    t.check('a leader is elected after the restart', back !== null);
    const r = await a.publish('orders.after', 'after', 'after-0');
    t.check('a publish succeeds after the restart', r.ok === true, { reply: r });
    acked.push('after-0');
    const states = await converge(t, a, 45000);
    t.note('members after the restart', { states: states.map(brief) });
    for (const s of states) {
      const missing = missingAcked(s, acked);
      t.check('every acknowledged message survived the power loss', missing.length === 0, { node: s.id, missing: missing.slice(0, 20), count: missing.length });
    }
    t.check('all members hold the same stream', states.length === 3 && new Set(states.map((s) => s.stream.hash)).size === 1, { states: states.map(brief) });
  },
};
