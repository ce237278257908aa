// lease-checkpoint — a lease's remaining TTL carried across a leader change.
import { connect } from './lib/client.mjs';

export default {
  name: 'lease-checkpoint',
  description:
    'With lease checkpoints every second, two leases go unrenewed for a few seconds (so both are checkpointed), ' +
    'then one is kept alive while the other is abandoned, and leadership is transferred: the abandoned lease resumes ' +
    'from about the TTL it had left (never a fresh TTL, never much less), the kept-alive one from its full TTL, and ' +
    'both keep their keys.',
  timeoutMs: 120000,
  config: { leaseCheckpointMs: 1000 },
  async run(t) {
    const kv = await connect(t, 'client-lease');
    const leader = await kv.findLeader(15000);
    t.check('a leader is elected', leader !== null);
    const idle = await kv.request('LeaseGrant', { ttl: 60 });
    const kept = await kv.request('LeaseGrant', { ttl: 20 });
    t.check('leases are granted', idle.ok === true && kept.ok === true, { idle, kept });
    const p1 = await kv.put('idle', 'x', { lease: idle.id });
    const p2 = await kv.put('kept', 'y', { lease: kept.id });
    t.check('puts with a lease are acknowledged', p1.ok === true && p2.ok === true, { p1, p2 });
    await t.sleep(3000);
    for (let i = 0; i < 8; i++) {
      await t.sleep(500);
      const ka = await kv.request('LeaseKeepAlive', { id: kept.id });
      t.check('keep-alive is acknowledged', ka.ok === true, { ka });
    }
    const before = await kv.request('LeaseTimeToLive', { id: idle.id });
    t.check('the idle lease counts down', before.ok === true && before.ttl <= 55 && before.ttl >= 45, { before });

    const from = (await kv.findLeader(5000)).id;
    const to = t.nodes.find((n) => n !== from);
    const moved = t.background(() => t.waitFor((e) => e.kind === 'log' && e.msg === 'became leader' && e.node === to, { timeoutMs: 10000, description: 'the transferee to lead' }));
    const tr = await kv.send(from, 'TransferLeader', { target: to });
    t.check('leader transfer starts', tr.ok === true, { tr });
    await moved;
    const after = await kv.request('LeaseTimeToLive', { id: idle.id });
    t.check('after the transfer the idle lease resumes from its checkpoint, not a fresh TTL', after.ok === true && after.ttl <= before.ttl + 2, { before, after });
    t.check('after the transfer the idle lease has not lost time', after.ok === true && after.ttl >= before.ttl - 2, { before, after });
    const keptAfter = await kv.request('LeaseTimeToLive', { id: kept.id });
    t.check('the kept-alive lease resumes from its full TTL', keptAfter.ok === true && keptAfter.ttl >= 19, { keptAfter });
    const g1 = await kv.get('idle');
    const g2 = await kv.get('kept');
    t.check('both leases keep their keys', g1.value === 'x' && g2.value === 'y', { g1, g2 });
  },
};
