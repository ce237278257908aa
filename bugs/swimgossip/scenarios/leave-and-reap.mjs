// leave-and-reap — a member leaves for good; the others must forget it in time.
import { SwimClient, brief, connect } from './lib/client.mjs';

export default {
  name: 'leave-and-reap',
  description:
    'n4 leaves the cluster gracefully and its process stops; n2 crashes for good. Both must be shown as left ' +
    'and failed, and then, once gossipToTheDeadMs has passed, be forgotten by every member. Then n3 restarts ' +
    'and rejoins through a seed: it must come back with the three live members and no trace of n4 or n2.',
  timeoutMs: 120000,
  config: { gossipToTheDeadMs: 3000 },
  async run(t) {
    const sw = await connect(t, 'client-leave');
    const up = await sw.waitAlive(t.nodes, t.nodes, 30000);
    t.check('every member sees all four alive', up.ok, { statuses: up.statuses.map(brief) });

    const logged = (node, msg, member) =>
      t.waitFor((e) => e.kind === 'log' && e.node === node && e.msg === msg && e.fields?.node === member, {
        timeoutMs: 30000,
        description: `${node} to log '${msg}' for ${member}`,
        includePast: true,
      });
    const rest = ['n1', 'n3'];
    const leftSeen = t.background(() => Promise.all(rest.map((n) => logged(n, 'member left', 'n4'))));
    const left = await sw.send('n4', 'Leave', {}, 6000);
    t.check('n4 leaves', left.ok === true, { left });
    await leftSeen;
    await t.kill('n4');
    await t.kill('n2');
    await Promise.all(rest.map((n) => logged(n, 'member failed', 'n2')));
    t.note('n4 left and n2 failed, as seen by n1 and n3');

    const gone = await sw.waitUntil(rest, (s) => s.members.length === 2, 20000);
    t.check('n1 and n3 forget the departed members', gone.ok, { statuses: gone.statuses.map(brief) });

    await t.kill('n3');
    await t.restart('n3');
    const back = await sw.waitAlive(rest, rest, 25000);
    t.check('n3 rejoins', back.ok, { statuses: back.statuses.map(brief) });
    await t.sleep(500);
    const st = await Promise.all(rest.map((n) => sw.status(n)));
    t.check('no member knows of n4 or n2 any more', st.every((s) => s.ok && s.members.length === 2), { statuses: st.map(brief) });
    const mentions = t
      .events()
      .filter((e) => e.kind === 'send' && e.node === 'n1' && e.msg === 'pushPullResp' && e.peer === 'n3')
      .slice(-1)
      .filter((e) => JSON.stringify(e.fields?.body ?? {}).includes('"n4"'));
    t.check("the seed's state sent to the rejoining n3 does not carry n4", mentions.length === 0, { count: mentions.length });
  },
};
