// replace-failed-member — a failed member's name is taken over by a process at a new address.
import { SwimClient, brief, connect } from './lib/client.mjs';

const RECLAIM_MS = 6000;

export default {
  name: 'replace-failed-member',
  description:
    'Members listen on ephemeral ports, so a restarted member comes back at a new address. n2 crashes, the ' +
    'others declare it failed, and n2 is started again at once. While n2 has been failed for less than ' +
    'deadNodeReclaimMs, no member may let the new address take its name; after that, every member must see ' +
    'n2 alive at its new address within a few push/pull intervals.',
  timeoutMs: 120000,
  config: { bindPort: 0, deadNodeReclaimMs: RECLAIM_MS, pushPullIntervalMs: 3000 },
  async run(t) {
    const sw = await connect(t, 'client-reclaim');
    const up = await sw.waitAlive(t.nodes, t.nodes, 30000);
    t.check('every member sees all four alive', up.ok, { statuses: up.statuses.map(brief) });
    const before = await sw.status('n2');

    await t.kill('n2');
    const rest = ['n1', 'n3', 'n4'];
    const failed = await sw.waitUntil(rest, (s) => SwimClient.view(s, 'n2') === 'dead', 25000);
    t.check('the others declare n2 failed', failed.ok, { statuses: failed.statuses.map(brief) });
    await t.restart('n2');
    t.note('restarted n2');

    const back = await sw.waitUntil(rest, (s) => SwimClient.view(s, 'n2') === 'alive' && SwimClient.addrOf(s, 'n2') !== before.addr, RECLAIM_MS + 20000);
    t.check('every member sees n2 alive at its new address', back.ok, { before: before.addr ?? null, statuses: back.statuses.map(brief) });
    const mine = await sw.status('n2');
    t.check('they record the address n2 advertises', back.statuses.every((s) => SwimClient.addrOf(s, 'n2') === mine.addr), { addr: mine.addr ?? null, statuses: back.statuses.map(brief) });

    // The new address may take the name only once n2 has been failed for deadNodeReclaimMs.
    const events = t.events().filter((e) => e.kind === 'log' && e.fields?.node === 'n2');
    for (const n of rest) {
      const failedAt = events.filter((e) => e.node === n && e.msg === 'member failed').map((e) => e.ts);
      const takenAt = events.filter((e) => e.node === n && (e.msg === 'member is alive' || e.msg === 'updating address of a replaced member')).map((e) => e.ts);
      const early = takenAt.filter((ts) => failedAt.some((f) => f < ts && ts - f < RECLAIM_MS * 1000));
      t.check(`${n} gives n2's name to the new address only after deadNodeReclaimMs`, early.length === 0, { failedAt, takenAt });
    }
  },
};
