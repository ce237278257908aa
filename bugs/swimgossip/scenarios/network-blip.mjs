// network-blip — a live member's probe replies are lost for a few seconds; it must not stay failed.
import { brief, connect } from './lib/client.mjs';

export default {
  name: 'network-blip',
  description:
    'All four members are up and stay up. For a few seconds the replies n4 sends to probes are lost on the ' +
    'network, so the others suspect it; n4 itself keeps running and every other message still gets through. ' +
    'A member that is up must be able to clear the suspicion: within a few seconds of the network recovering ' +
    'every member must see all four alive, and keep seeing them so.',
  timeoutMs: 120000,
  async run(t) {
    const sw = await connect(t, 'client-blip');
    const up = await sw.waitAlive(t.nodes, t.nodes, 30000);
    t.check('every member sees all four alive', up.ok, { statuses: up.statuses.map(brief) });
    const rest = ['n1', 'n2', 'n3'];

    const suspected = t.background(() =>
      t.waitFor((e) => e.kind === 'log' && rest.includes(e.node) && e.msg === 'suspect has failed, no acks received' && e.fields?.node === 'n4', {
        timeoutMs: 15000,
        description: 'some member to suspect n4',
      }),
    );
    for (const n of rest) t.addLinkFault({ from: 'n4', to: n, type: 'ack', drop: 1 });
    t.note('replies from n4 are being lost');
    await suspected;
    // Keep the replies lost past the suspicion timeout.
    await t.sleep(4500 + Math.floor(t.random() * 1500));
    t.clearLinkFaults();
    t.note('network recovered');
    // Let the probes begun while the replies were lost run out.
    await t.sleep(2000);

    const back = await sw.waitAlive(t.nodes, t.nodes, 6000);
    t.check('every member sees all four alive soon after the network recovers', back.ok, { statuses: back.statuses.map(brief) });
    for (let i = 0; i < 4; i++) {
      await t.sleep(400);
      const st = await Promise.all(t.nodes.map((n) => sw.status(n)));
      t.check('all four stay alive', st.every((s) => s.ok && s.alive.length === 4), { statuses: st.map(brief) });
    }
    const failed = t.events().filter((e) => e.kind === 'log' && e.msg === 'member failed' && e.fields?.node === 'n4').map((e) => ({ node: e.node, ts: e.ts }));
    t.check('no member declares the running n4 failed', failed.length === 0, { failed });
  },
};
