// mass-restart — a member crashes and, while it is down, the seed it rejoins through restarts too.
import { SwimClient, brief, connect } from './lib/client.mjs';

export default {
  name: 'mass-restart',
  description:
    'Part of a rolling mass restart: n2 crashes and the others declare it failed. While it is down, the seed ' +
    'n1 is restarted and rejoins the cluster through n3. Then n2 comes back and rejoins through n1. Within a ' +
    'few seconds every member must see all four alive, and keep seeing them so.',
  timeoutMs: 120000,
  async run(t) {
    const sw = await connect(t, 'client-restart');
    const up = await sw.waitAlive(t.nodes, t.nodes, 30000);
    t.check('every member sees all four alive', up.ok, { statuses: up.statuses.map(brief) });

    await t.kill('n2');
    const rest = ['n1', 'n3', 'n4'];
    const failed = await sw.waitUntil(rest, (s) => SwimClient.view(s, 'n2') === 'dead', 25000);
    t.check('the others declare n2 failed', failed.ok, { statuses: failed.statuses.map(brief) });
    const deadInc = Math.max(...failed.statuses.map((s) => s.members?.find((m) => m.name === 'n2')?.incarnation ?? 0));
    // Let the news of its failure finish spreading.
    await t.sleep(800);

    await t.kill('n1');
    await t.restart('n1');
    const rejoined = await sw.waitUntil(['n1'], (s) => ['n3', 'n4'].every((n) => SwimClient.view(s, n) === 'alive'), 25000);
    t.check('the restarted seed n1 rejoins the cluster', rejoined.ok, { statuses: rejoined.statuses.map(brief) });
    const seen = await sw.waitUntil(['n3', 'n4'], (s) => SwimClient.view(s, 'n1') === 'alive', 25000);
    t.check('n3 and n4 see n1 alive again', seen.ok, { statuses: seen.statuses.map(brief) });

    await t.restart('n2');
    t.note('restarted n2');
    const back = await sw.waitAlive(t.nodes, t.nodes, 10000);
    t.check('every member sees all four alive after the restarts', back.ok, { statuses: back.statuses.map(brief) });
    const incs = back.statuses.map((s) => s.members?.find((m) => m.name === 'n2')?.incarnation ?? 0);
    t.check('n2 is alive again only under a higher incarnation than the one it was declared failed at', incs.every((i) => i > deadInc), { deadInc, incs });
    for (let i = 0; i < 4; i++) {
      await t.sleep(300);
      const st = await Promise.all(t.nodes.map((n) => sw.status(n)));
      t.check('all four stay alive', st.every((s) => s.ok && s.alive.length === 4), { statuses: st.map(brief) });
    }
  },
};
