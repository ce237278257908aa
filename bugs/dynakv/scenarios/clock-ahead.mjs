// clock-ahead — a node's clock jumps far ahead and its gossip restarts.
import { brief, connect } from './lib/client.mjs';

export default {
  name: 'clock-ahead',
  description:
    "n4's clock jumps two days ahead and its gossip is stopped and started again, so it gossips a generation " +
    'far beyond any the others could take themselves: they must not believe it and keep n4 down, while n1, ' +
    'n2 and n3 keep seeing each other up and serving writes and reads at QUORUM.',
  timeoutMs: 120000,
  config: { maxGenerationDifferenceS: 86400 },
  async run(t) {
    const kv = await connect(t, 'client-clock');
    const views = await kv.waitViews(t.nodes, { live: t.nodes, ring: t.nodes, timeoutMs: 60000 });
    t.check('every node sees the whole ring up', views.ok, { statuses: views.statuses.map(brief) });
    const rest = ['n1', 'n2', 'n3'];

    // n4's clock jumps two days ahead; gossip restarts there (nodetool disablegossip / enablegossip).
    t.skewClock('n4', 2 * 86400 * 1000);
    await t.sleep(500);
    const stopped = await kv.send('n4', 'StopGossiping', {});
    t.check('gossip stops on n4', stopped.ok === true, { stopped });
    const started = await kv.send('n4', 'StartGossiping', {});
    t.check('gossip starts again on n4', started.ok === true, { started });
    const down = await kv.waitViews(rest, { live: rest, timeoutMs: 10000 });
    t.check('the others mark n4 down and keep it so', down.ok, { statuses: down.statuses.map(brief) });
    // Long enough for many gossip rounds with n4.
    await t.sleep(3000);
    const after = await kv.waitViews(rest, { live: rest, timeoutMs: 1000 });
    t.check('no node believes the generation of the node whose clock is far ahead', after.ok, { statuses: after.statuses.map(brief) });
    for (let i = 0; i < 8; i++) {
      const coordinator = rest[i % rest.length];
      const w = await kv.put(coordinator, `clock/${i}`, `v${i}`, 'QUORUM');
      t.check('a write at QUORUM succeeds on the other three', w.ok === true, { coordinator, reply: w });
      const r = await kv.get(rest[(i + 1) % rest.length], `clock/${i}`, 'QUORUM');
      t.check('a read at QUORUM sees it', r.ok === true && r.value === `v${i}`, { reply: r });
    }
  },
};
