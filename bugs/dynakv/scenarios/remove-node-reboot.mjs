// remove-node-reboot — a dead node is removed from the ring while another node reboots.
import { brief, connect } from './lib/client.mjs';

export default {
  name: 'remove-node-reboot',
  description:
    'n4 dies for good and is removed with RemoveNode through n1. Right after n3 has taken n4 out of its ring, ' +
    'n3 is rebooted (killed and restarted). Once the removal has had time to settle, no node may still carry n4 ' +
    'in its gossip state or its ring, for good; writes and reads at ALL keep working on the three remaining nodes.',
  timeoutMs: 120000,
  config: { removedExpireMs: 8000 },
  async run(t) {
    const kv = await connect(t, 'client-remove');
    const views = await kv.waitViews(t.nodes, { live: t.nodes, ring: t.nodes, timeoutMs: 60000 });
    t.check('every node sees the whole ring up', views.ok, { statuses: views.statuses.map(brief) });
    const rest = ['n1', 'n2', 'n3'];

    await t.kill('n4');
    const down = await kv.waitViews(rest, { live: rest, timeoutMs: 10000 });
    t.check('the others mark n4 down', down.ok, { statuses: down.statuses.map(brief) });

    const excised = t.background(() => t.waitFor((e) => e.kind === 'log' && e.node === 'n3' && e.msg === 'removed endpoint from ring' && e.fields?.endpoint === 'n4', {
      timeoutMs: 10000,
      description: 'n3 to take n4 out of its ring',
      includePast: true,
    }));
    const removed = await kv.send('n1', 'RemoveNode', { node: 'n4' });
    t.check('RemoveNode is accepted', removed.ok === true, { removed });
    // The removal's expire time (removedExpireMs) and a few gossip rounds more.
    const settledAfterExpiry = t.sleep(8000 + 800);
    await excised;
    await t.kill('n3');
    await t.restart('n3');
    t.note('rebooted n3 after it applied the removal');

    const ring = await kv.waitViews(rest, { live: rest, ring: rest, timeoutMs: 8000 });
    t.check('the three remaining nodes see each other up, without n4 in the ring', ring.ok, { statuses: ring.statuses.map(brief) });

    // Past the removal's expire time (and a couple of gossip rounds), then for a while longer.
    await settledAfterExpiry;
    for (let i = 0; i < 6; i++) {
      const states = await Promise.all(rest.map((n) => t.state(n)));
      const lingering = states.filter((s) => s.gossip.n4 !== undefined || s.ring.includes('n4'));
      t.check('no node still carries the removed n4', lingering.length === 0, {
        lingering: lingering.map((s) => ({ id: s.id, n4: s.gossip.n4 ?? null, ring: s.ring })),
      });
      await t.sleep(400);
    }
    // Nor does any gossip message still mention it.
    const from = t.events().length;
    await t.sleep(1000);
    const mentions = t
      .events()
      .slice(from)
      .filter((e) => e.kind === 'send' && e.msg.startsWith('GossipDigest') && JSON.stringify(e.fields?.body ?? {}).includes('"n4"'));
    t.check('no gossip message mentions the removed n4', mentions.length === 0, {
      mentions: mentions.slice(0, 5).map((e) => ({ node: e.node, msg: e.msg, peer: e.peer ?? null })),
      count: mentions.length,
    });

    for (let i = 0; i < 6; i++) {
      const coordinator = rest[i % rest.length];
      const w = await kv.put(coordinator, `after/${i}`, `v${i}`, 'ALL');
      t.check('a write at ALL succeeds on the remaining nodes', w.ok === true, { coordinator, reply: w });
      const r = await kv.get(rest[(i + 1) % rest.length], `after/${i}`, 'ALL');
      t.check('a read at ALL sees it', r.ok === true && r.value === `v${i}`, { reply: r });
    }
  },
};
