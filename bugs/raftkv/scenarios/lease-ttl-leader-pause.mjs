// lease-ttl-leader-pause — an abandoned lease across several leaders that stall.
import { connect } from './lib/client.mjs';

const CHANGES = 3;

export default {
  name: 'lease-ttl-leader-pause',
  description:
    'With lease checkpoints every second, a client takes a 60 s lease, attaches a key and abandons it. Three times, ' +
    'the current leader stalls (it is paused) until another member takes over, then resumes. After each change the ' +
    'lease must resume from about the TTL it had left before: never more than a checkpoint interval more, never much less.',
  timeoutMs: 120000,
  config: { leaseCheckpointMs: 1000 },
  async run(t) {
    const kv = await connect(t, 'client-lease');
    const first = await kv.findLeader(15000);
    t.check('a leader is elected', first !== null);
    const lease = await kv.request('LeaseGrant', { ttl: 60 });
    t.check('the lease is granted', lease.ok === true, { lease });
    const put = await kv.put('session', 'owner', { lease: lease.id });
    t.check('put with the lease is acknowledged', put.ok === true, { put });

    for (let i = 1; i <= CHANGES; i++) {
      await t.sleep(6000);
      const old = (await kv.findLeader(5000)).id;
      const before = await kv.request('LeaseTimeToLive', { id: lease.id });
      t.check('the lease counts down under the leader', before.ok === true, { before, leader: old });
      const elected = t.background(() => t.waitFor((e) => e.kind === 'log' && e.msg === 'became leader' && e.node !== old, { timeoutMs: 15000, description: 'another member to take over' }));
      await t.pause(old);
      const ev = await elected;
      await t.resume(old);
      kv.leader = ev.node;
      const after = await kv.request('LeaseTimeToLive', { id: lease.id });
      t.note('leader change', { change: i, from: old, to: ev.node, before: before.ttl, after: after.ttl ?? null });
      t.check('after a leader change the lease gets no more than a checkpoint interval back', after.ok === true && after.ttl <= before.ttl + 2, { change: i, before, after });
      t.check('after a leader change the lease has not lost time', after.ok === true && after.ttl >= before.ttl - 2, { change: i, before, after });
    }
    const g = await kv.get('session');
    t.check("the lease's key is still there", g.ok === true && g.value === 'owner', { g });
  },
};
