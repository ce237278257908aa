// basic — members find each other and stay up.
import { brief, connect } from './lib/client.mjs';

export default {
  name: 'basic',
  description:
    'Four members start and join through the seeds. Every member must see all four alive, and keep seeing ' +
    'them alive for a few seconds of probing and gossip (no false suspicion turns into a failure).',
  timeoutMs: 120000,
  async run(t) {
    const sw = await connect(t, 'client-basic');
    const up = await sw.waitAlive(t.nodes, t.nodes, 30000);
    t.check('every member sees all four alive', up.ok, { statuses: up.statuses.map(brief) });
    for (let i = 0; i < 6; i++) {
      await t.sleep(400);
      const st = await Promise.all(t.nodes.map((n) => sw.status(n)));
      const bad = st.filter((s) => !s.ok || s.alive.length !== t.nodes.length);
      t.check('all four stay alive', bad.length === 0, { statuses: st.map(brief) });
    }
    const states = await Promise.all(t.nodes.map((n) => t.state(n)));
    t.check('every member joined', states.every((s) => s.joined || s.id === 'n1'), { states: states.map((s) => ({ id: s.id, joined: s.joined })) });
    t.check('views agree on incarnations', new Set(states.map((s) => s.members.map((m) => `${m.name}@${m.incarnation}`).join())).size === 1, {
      views: states.map(brief),
    });
  },
};
