// basic — the everyday behaviour of a healthy cluster.
import { brief, connect, converge, hex } from './lib/client.mjs';

export default {
  name: 'basic',
  description:
    'A healthy cluster: writes, overwrites, deletes and reads through the leader; followers redirect to it; ' +
    'a lease kept alive keeps its key while an abandoned one takes its key with it; a lock passes from one ' +
    'holder to the next waiter on unlock; every member ends with the same data.',
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-basic');
    const leader = await kv.findLeader(15000);
    t.check('a leader is elected', leader !== null);
    t.note('leader found', { leader: leader.id, term: leader.term });

    // A follower sends clients to the leader.
    const follower = t.nodes.find((n) => n !== leader.id);
    const redirected = await kv.send(follower, 'Put', { key: 'probe', value: 'x' });
    t.check('a follower refuses a write and names the leader', redirected.ok === true || (redirected.error === 'not leader' && typeof redirected.leader === 'string'), { reply: redirected });

    const expected = {};
    for (let i = 0; i < 20; i++) {
      const r = await kv.put(`key/${i}`, `v${i}`);
      t.check('put is acknowledged', r.ok === true, { key: `key/${i}`, reply: r });
      expected[`key/${i}`] = `v${i}`;
    }
    for (let i = 0; i < 20; i++) {
      const r = await kv.get(`key/${i}`);
      t.check('get returns the last acknowledged value', r.ok === true && r.value === `v${i}`, { key: `key/${i}`, reply: r });
    }
    const over = await kv.put('key/0', 'v0-b');
    const del = await kv.request('Delete', { key: 'key/1' });
    t.check('overwrite and delete are acknowledged', over.ok === true && del.ok === true && del.deleted === 1, { over, del });
    expected['key/0'] = 'v0-b';
    delete expected['key/1'];
    const g0 = await kv.get('key/0');
    const g1 = await kv.get('key/1');
    t.check('reads see the overwrite and the delete', g0.value === 'v0-b' && g1.ok === true && g1.found === false, { g0, g1 });
    const all = await kv.request('Get', { prefix: 'key/' });
    t.check('a prefix read returns every live key', all.ok === true && all.kvs.length === 19, { count: all.kvs?.length ?? null });

    // Leases: one kept alive past its TTL, one abandoned.
    const short = await kv.request('LeaseGrant', { ttl: 3 });
    t.check('a lease is granted', short.ok === true, { short });
    const p1 = await kv.put('lease/abandoned', 'a', { lease: short.id });
    const kept = await kv.request('LeaseGrant', { ttl: 5 });
    t.check('a lease is granted', kept.ok === true, { kept });
    const p2 = await kv.put('lease/kept', 'k', { lease: kept.id });
    t.check('puts with a lease are acknowledged', p1.ok === true && p2.ok === true, { p1, p2 });
    const bad = await kv.put('lease/none', 'x', { lease: 12345 });
    t.check('a put with an unknown lease is refused', bad.ok === false && bad.error === 'lease not found', { bad });
    const revoked = t.background(() => t.waitFor((e) => e.kind === 'log' && e.msg === 'lease revoked' && e.fields?.lease === short.id, {
      timeoutMs: 15000,
      description: 'the abandoned lease to be revoked',
      includePast: true,
    }));
    for (let i = 0; i < 13; i++) {
      const ka = await kv.request('LeaseKeepAlive', { id: kept.id });
      t.check('keep-alive is acknowledged', ka.ok === true && ka.ttl === 5, { ka });
      await t.sleep(500);
    }
    await revoked;
    const gone = await kv.get('lease/abandoned');
    const still = await kv.get('lease/kept');
    t.check('the abandoned lease took its key with it', gone.ok === true && gone.found === false, { gone });
    t.check('the kept-alive lease kept its key past its TTL', still.ok === true && still.value === 'k', { still });

    // A lock passes to the next waiter.
    const la = await kv.request('LeaseGrant', { ttl: 30 });
    const lb = await kv.request('LeaseGrant', { ttl: 30 });
    const first = await kv.request('Lock', { name: 'job', lease: la.id }, { tryMs: 5000 });
    t.check('the first locker gets the lock', first.ok === true && first.key === `lock/job/${hex(la.id)}`, { first });
    const queued = t.background(() => t.waitFor((e) => e.kind === 'log' && e.msg === 'lock waiting' && e.fields?.key === `lock/job/${hex(lb.id)}`, {
      timeoutMs: 10000,
      description: 'the second locker to queue',
      includePast: true,
    }));
    let secondDone = false;
    const second = kv.request('Lock', { name: 'job', lease: lb.id }, { timeoutMs: 20000, tryMs: 20000 }).then((r) => {
      secondDone = true;
      return r;
    });
    await queued;
    await t.sleep(300);
    t.check('the second locker waits while the lock is held', !secondDone);
    const un = await kv.request('Unlock', { key: first.key });
    t.check('unlock is acknowledged', un.ok === true, { un });
    const got = await second;
    t.check('the waiter gets the lock after unlock', got.ok === true && got.rev > first.rev, { got, first });
    const un2 = await kv.request('Unlock', { key: got.key });
    t.check('second unlock is acknowledged', un2.ok === true, { un2 });

    // Every member converges on the same data.
    const states = await converge(t, kv);
    t.check('all members applied everything', states.length === 3 && new Set(states.map((s) => s.appliedIndex)).size === 1, { states: states.map(brief) });
    t.check('all members hold the same data', new Set(states.map((s) => s.kvHash)).size === 1, { states: states.map(brief) });
    for (const s of states) {
      const missing = Object.entries(expected).filter(([k, v]) => s.kv?.[k] !== v).map(([k]) => k);
      t.check('every acknowledged write is on every member', missing.length === 0, { node: s.id, missing });
    }
  },
};
