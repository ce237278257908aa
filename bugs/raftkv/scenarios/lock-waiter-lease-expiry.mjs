// lock-waiter-lease-expiry — a lock waiter whose lease runs out while it waits.
import { connect, hex } from './lib/client.mjs';

const lockKeyOf = (lease) => `lock/job/${hex(lease)}`;

export default {
  name: 'lock-waiter-lease-expiry',
  description:
    "Client A holds lock 'job'. Client B queues for it under a 3 s lease whose keep-alives never reach the " +
    'cluster, so the lease runs out while B waits. Client C then queues too, and A unlocks. C must be granted ' +
    'the lock, and B and C must never both be told they hold it.',
  timeoutMs: 120000,
  async run(t) {
    const a = await connect(t, 'client-a');
    const b = await connect(t, 'client-b');
    const c = await connect(t, 'client-c');
    const leader = await a.findLeader(15000);
    t.check('a leader is elected', leader !== null);

    const la = await a.request('LeaseGrant', { ttl: 60 });
    t.check('A is granted a lease', la.ok === true, { la });
    const lockA = await a.request('Lock', { name: 'job', lease: la.id }, { tryMs: 5000 });
    t.check('A gets the lock', lockA.ok === true, { lockA });

    // B's keep-alives are lost on the way to the cluster.
    t.addLinkFault({ from: 'client-b', to: '*', type: 'LeaseKeepAlive', drop: 1 });
    const lb = await b.request('LeaseGrant', { ttl: 3 });
    t.check('B is granted a lease', lb.ok === true, { lb });
    let keepAlive = true;
    const keepAliveLoop = t.background(async () => {
      while (keepAlive) {
        if (b.leader) await b.send(b.leader, 'LeaseKeepAlive', { id: lb.id }, 300);
        await t.sleep(500);
      }
    });

    const bQueued = t.background(() => t.waitFor((e) => e.kind === 'log' && e.msg === 'lock waiting' && e.fields?.key === lockKeyOf(lb.id), {
      timeoutMs: 10000,
      description: 'B to queue for the lock',
      includePast: true,
    }));
    const lockB = b.request('Lock', { name: 'job', lease: lb.id }, { timeoutMs: 30000, tryMs: 30000 });
    await bQueued;
    await t.waitFor((e) => e.kind === 'log' && e.msg === 'lease revoked' && e.fields?.lease === lb.id, {
      timeoutMs: 15000,
      description: "B's lease to be revoked",
      includePast: true,
    });

    const lc = await c.request('LeaseGrant', { ttl: 60 });
    t.check('C is granted a lease', lc.ok === true, { lc });
    const cQueued = t.background(() => t.waitFor((e) => e.kind === 'log' && e.msg === 'lock waiting' && e.fields?.key === lockKeyOf(lc.id), {
      timeoutMs: 10000,
      description: 'C to queue for the lock',
      includePast: true,
    }));
    const lockC = c.request('Lock', { name: 'job', lease: lc.id }, { timeoutMs: 30000, tryMs: 30000 });
    await cQueued;

    const un = await a.request('Unlock', { key: lockA.key });
    t.check('A unlocks', un.ok === true, { un });
    const [rb, rc] = await Promise.all([lockB, lockC]);
    keepAlive = false;
    await keepAliveLoop;
    t.note('lock replies', { b: rb, c: rc });
    t.check('C is granted the lock once A unlocks', rc.ok === true, { c: rc });
    t.check('mutual exclusion: B and C are not both granted the lock', !(rb.ok === true && rc.ok === true), { b: rb, c: rc });
  },
};
