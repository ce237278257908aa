// leave-and-replace — a member leaves gracefully, stops, and a new process takes its name at a new address.
import { SwimClient, brief, connect } from './lib/client.mjs';

export default {
  name: 'leave-and-replace',
  description:
    'Members listen on ephemeral ports, so a member that starts again comes back at a new address (as a ' +
    'rescheduled pod does). n4 leaves the cluster gracefully and its process stops; the others show it as ' +
    'left. A few seconds later n4 is started again and rejoins through a seed. Within a few seconds every ' +
    'member must see n4 alive at its new address, and keep seeing it so.',
  timeoutMs: 120000,
  config: { bindPort: 0, deadNodeReclaimMs: 30000 },
  async run(t) {
    const sw = await connect(t, 'client-replace');
    const up = await sw.waitAlive(t.nodes, t.nodes, 30000);
    t.check('every member sees all four alive', up.ok, { statuses: up.statuses.map(brief) });
    const rest = ['n1', 'n2', 'n3'];
    const before = await sw.status('n4');

    const leftSeen = t.background(() =>
      Promise.all(
        rest.map((n) =>
          t.waitFor((e) => e.kind === 'log' && e.node === n && e.msg === 'member left' && e.fields?.node === 'n4', {
            timeoutMs: 20000,
            description: `${n} to see n4 leave`,
            includePast: true,
          }),
        ),
      ),
    );
    const left = await sw.send('n4', 'Leave', {}, 6000);
    t.check('n4 leaves', left.ok === true, { left });
    await leftSeen;
    await t.kill('n4');
    t.note('n4 left and stopped');
    await t.sleep(1500 + Math.floor(t.random() * 1500));
    const shown = await Promise.all(rest.map((n) => sw.status(n)));
    t.check('the others show n4 as left', shown.every((s) => s.ok && SwimClient.view(s, 'n4') === 'left'), { statuses: shown.map(brief) });

    await t.restart('n4');
    const fresh = await sw.waitUntil(['n4'], (s) => s.alive.length === 4, 15000);
    const addr = fresh.statuses[0]?.addr ?? null;
    t.check('n4 rejoins at a new address', fresh.ok && addr !== null && addr !== before.addr, { before: before.addr ?? null, after: addr, status: brief(fresh.statuses[0]) });

    const back = await sw.waitUntil(rest, (s) => SwimClient.view(s, 'n4') === 'alive' && SwimClient.addrOf(s, 'n4') === addr, 8000);
    t.check('every member sees n4 alive at its new address', back.ok, { addr, statuses: back.statuses.map(brief) });
    for (let i = 0; i < 4; i++) {
      await t.sleep(400);
      const st = await Promise.all(t.nodes.map((n) => sw.status(n)));
      t.check('all four stay alive', st.every((s) => s.ok && s.alive.length === 4), { statuses: st.map(brief) });
    }
  },
};
