// member-failure — a member crashes, is declared failed, and comes back.
import { SwimClient, brief, connect } from './lib/client.mjs';

export default {
  name: 'member-failure',
  description:
    'A member is killed. The others must suspect it and declare it failed within a few probe intervals and ' +
    'the suspicion timeout. It is restarted: it rejoins through a seed, refutes the accusation with a higher ' +
    'incarnation, and every member sees all four alive again.',
  timeoutMs: 120000,
  async run(t) {
    const sw = await connect(t, 'client-failure');
    const up = await sw.waitAlive(t.nodes, t.nodes, 30000);
    t.check('every member sees all four alive', up.ok, { statuses: up.statuses.map(brief) });
    const victim = ['n2', 'n4'][Math.floor(t.random() * 2)];
    const others = t.nodes.filter((n) => n !== victim);
    await t.kill(victim);
    t.note('killed a member', { victim });
    const failed = await sw.waitUntil(others, (s) => SwimClient.view(s, victim) === 'dead', 25000);
    t.check('the others declare it failed', failed.ok, { statuses: failed.statuses.map(brief) });
    const alive = await sw.waitAlive(others, others, 6000);
    t.check('the others still see each other alive', alive.ok, { statuses: alive.statuses.map(brief) });

    await t.restart(victim);
    const back = await sw.waitAlive(t.nodes, t.nodes, 25000);
    t.check('every member sees all four alive again', back.ok, { statuses: back.statuses.map(brief) });
    const s = await t.state(victim);
    t.check('the restarted member refuted with a higher incarnation', s.incarnation > 1, { state: brief(s) });
  },
};
