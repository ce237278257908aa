// gossip-bounce — gossip is stopped and started again on one node, on a slow link.
import { brief, connect } from './lib/client.mjs';

export default {
  name: 'gossip-bounce',
  description:
    'With writes going through n1, gossip is stopped on n2 (it announces its shutdown to the others) and ' +
    'started again a moment later under a new generation, like nodetool disablegossip / enablegossip. The ' +
    'link from n2 to n1 is slow for a moment, so what n2 sent just before reaches n1 late. Once n2 gossips ' +
    'again, every node must see all four nodes up, and stay that way; writes at ALL through n1 must succeed ' +
    'and reads at ALL must see them.',
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-drain');
    const views = await kv.waitViews(t.nodes, { live: t.nodes, ring: t.nodes, timeoutMs: 60000 });
    t.check('every node sees the whole ring up', views.ok, { statuses: views.statuses.map(brief) });
    for (let i = 0; i < 6; i++) {
      const r = await kv.put('n1', `before/${i}`, `v${i}`, 'ALL');
      t.check('a write at ALL succeeds before gossip stopped', r.ok === true, { reply: r });
    }

    t.addLinkFault({ from: 'n2', to: 'n1', type: 'GossipShutdown', delayMs: [2000, 2000] });
    const mark = t.events().length;
    const stopped = await kv.send('n2', 'StopGossiping', {});
    t.check('gossip stops on n2', stopped.ok === true, { stopped });
    const late = t.background(() => t.waitFor((e) => e.kind === 'recv' && e.node === 'n1' && e.msg === 'GossipShutdown', {
      timeoutMs: 10000,
      description: "n2's shutdown announcement to reach n1",
      includePast: true,
    }));
    // Those that got the announcement mark n2 down at once, without waiting to convict it.
    const others = ['n1', 'n3', 'n4'];
    const told = await kv.waitViews(['n3', 'n4'], { live: others, timeoutMs: 3000 });
    t.check('n3 and n4 mark n2 down when it stops gossiping', told.ok, { statuses: told.statuses.map(brief) });
    const convicted = t
      .events()
      .slice(mark)
      .filter((e) => e.kind === 'log' && e.msg === 'convicting endpoint' && e.fields?.endpoint === 'n2' && (e.node === 'n3' || e.node === 'n4'));
    t.check('n2 was marked down by its announcement, not convicted', convicted.length === 0, { convicted: convicted.map((e) => e.node) });
    const started = await kv.send('n2', 'StartGossiping', {});
    t.check('gossip starts again on n2', started.ok === true, { started });
    await late;
    t.clearLinkFaults();

    // A few convict intervals later the views must have settled, all up.
    await t.sleep(1200);
    const settled = await kv.waitViews(t.nodes, { live: t.nodes, timeoutMs: 2000 });
    t.check('every node sees all four nodes up after gossip restarted', settled.ok, { statuses: settled.statuses.map(brief) });
    const views2 = settled.statuses.filter((s) => s.id !== 'n2').map((s) => ({ id: s.id, n2: s.endpoints?.n2 ?? null }));
    t.check(
      "every node holds n2's new generation with status NORMAL",
      views2.every((v) => v.n2 && v.n2.alive && v.n2.status === 'NORMAL' && v.n2.generation === started.generation),
      { generation: started.generation, views: views2 },
    );
    const acked = {};
    for (let i = 0; i < 8; i++) {
      const r = await kv.put('n1', `after/${i}`, `v${i}`, 'ALL');
      t.check('a write at ALL through n1 succeeds after gossip restarted', r.ok === true, { reply: r });
      acked[`after/${i}`] = `v${i}`;
    }
    for (const [k, v] of Object.entries(acked)) {
      const r = await kv.get('n2', k, 'ALL');
      t.check('a read at ALL sees the write', r.ok === true && r.value === v, { key: k, reply: r });
    }
  },
};
