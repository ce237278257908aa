// lease-ttl-after-leader-changes — an abandoned long lease while the leader changes
// twice, the second time more than five minutes after the first.
import { agreedLeader, b64, call, get, grant, memberIds, ok, settledTimeToLive, stallLeader, timeToLive, why } from './lib/etcd.mjs';

const TTL = 900;
/** How long the second leader leads before the next change (s): longer than etcd's lease checkpoint interval (5 min). */
const LEADS_FOR = 320;

export default {
  name: 'lease-ttl-after-leader-changes',
  description:
    `A client takes a ${TTL} s lease, attaches a key and abandons it. The leader stalls (it is paused) until another member ` +
    `takes over, then resumes; the new leader leads for ${LEADS_FOR} s, then stalls the same way. After the second change ` +
    'the lease must have counted down: a leader change may give it back at most the five minutes between lease checkpoints, ' +
    "never reset it to its full TTL. The lease's key must still be there.",
  timeoutMs: (LEADS_FOR + 150) * 1000,
  async run(t) {
    const c = await t.client('client-lease');
    const ids = await memberIds(t, c);
    const first = await agreedLeader(t, c, ids);

    const lease = await grant(c, first, TTL);
    t.check('the lease is granted', lease.ok, { error: lease.error ?? null });
    if (!lease.ok) return;
    const granted = Date.now();
    const put = await call(c, first, 'Put', { key: b64('session/worker'), value: b64('owner'), lease: lease.id }, 5000);
    t.check('put with the lease is acknowledged', ok(put), { error: why(put) ?? null });
    t.note('lease granted', { leader: first, id: lease.id, ttl: TTL });

    await t.sleep(3000);
    const second = await stallLeader(t, c, ids, first);
    const one = await settledTimeToLive(t, c, second, lease.id, TTL + 2);
    t.note('first leader change', { from: first, to: second, ttl: one.ttl ?? null, secondsSinceGrant: Math.round((Date.now() - granted) / 1000) });
    const kept = one.ok && one.ttl > 0 && one.ttl <= TTL + 2;
    t.check('the lease lives on after a leader change, with no more TTL left than it was granted', kept, { ttl: TTL, left: one.ttl ?? null, error: one.error ?? null });
    if (!kept) return;

    await t.sleep(LEADS_FOR * 1000);
    const before = await timeToLive(c, second, lease.id);
    const third = await stallLeader(t, c, ids, second);
    // With checkpoints on, a leader change gives a lease back at most one checkpoint interval.
    const most = Math.ceil(TTL - (Date.now() - granted) / 1000 + 300);
    const after = await settledTimeToLive(t, c, third, lease.id, most);
    const elapsed = (Date.now() - granted) / 1000;
    t.note('second leader change', { from: second, to: third, before: before.ttl ?? null, after: after.ttl ?? null, secondsSinceGrant: Math.round(elapsed) });
    t.check('the lease keeps counting down across leader changes', after.ok && after.ttl > 0 && after.ttl <= most, {
      ttl: TTL,
      secondsSinceGrant: Math.round(elapsed),
      beforeTheChange: before.ttl ?? null,
      afterTheChange: after.ttl ?? null,
      mostAllowed: most,
      error: after.error ?? null,
    });
    const g = await get(c, third, 'session/worker');
    t.check("the lease's key is still there", g.ok && g.value === 'owner', { value: g.value ?? null, error: g.error ?? null });
  },
};
