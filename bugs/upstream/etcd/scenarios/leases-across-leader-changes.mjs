// leases-across-leader-changes — leases expire on time, and only on time, while the
// leader stalls and changes.
import { agreedLeader, b64, call, get, grant, memberIds, ok, put, settledTimeToLive, stallLeader, timeToLive, why } from './lib/etcd.mjs';

const SHORT = 6;
const LONG = 900;

export default {
  name: 'leases-across-leader-changes',
  description:
    `A client takes a ${SHORT} s lease and a ${LONG} s lease, each with a key, and keeps neither alive. The leader stalls ` +
    '(it is paused) until another member takes over, twice. The short lease must expire and take its key with it within ' +
    'a few seconds of its TTL and a leader change; the long lease and its key must stay, with a TTL left that is below ' +
    'what it was granted and not far below what it had before the changes, and writes must go on.',
  timeoutMs: 120000,
  async run(t) {
    const c = await t.client('client-lease');
    const ids = await memberIds(t, c);
    const first = await agreedLeader(t, c, ids);
    const leases = {};
    for (const [name, ttl] of [['short', SHORT], ['long', LONG]]) {
      const l = await grant(c, first, ttl);
      t.check('the lease is granted', l.ok, { lease: name, error: l.error ?? null });
      if (!l.ok) return;
      const p = await call(c, first, 'Put', { key: b64(`session/${name}`), value: b64(name), lease: l.id }, 5000);
      t.check('put with the lease is acknowledged', ok(p), { lease: name, error: why(p) ?? null });
      leases[name] = l.id;
    }
    const granted = Date.now();

    await t.sleep(1000);
    const second = await stallLeader(t, c, ids, first);
    t.note('first leader change', { from: first, to: second });
    // The short lease expires: its key goes with it on every member.
    const gone = await t
      .until(async () => {
        const rs = await Promise.all(t.nodes.map((n) => get(c, n, 'session/short')));
        return rs.every((r) => r.ok && r.value === undefined) ? true : undefined;
      }, { timeoutMs: (SHORT + 20) * 1000, everyMs: 500, description: 'the short lease to expire' })
      .catch(() => false);
    const shortTtl = await timeToLive(c, second, leases.short);
    t.check('an abandoned lease expires and its key is deleted', gone === true && shortTtl.ok && shortTtl.ttl === -1, {
      secondsSinceGrant: Math.round((Date.now() - granted) / 1000),
      ttl: shortTtl.ttl ?? null,
      error: shortTtl.error ?? null,
    });

    const before = await timeToLive(c, second, leases.long);
    const third = await stallLeader(t, c, ids, second);
    t.note('second leader change', { from: second, to: third });
    const after = await settledTimeToLive(t, c, third, leases.long, LONG);
    const elapsed = (Date.now() - granted) / 1000;
    t.check('a long lease lives on across leader changes', after.ok && after.ttl > 0 && after.ttl <= LONG && after.ttl >= LONG - elapsed - 10, {
      ttl: LONG,
      secondsSinceGrant: Math.round(elapsed),
      beforeTheChange: before.ttl ?? null,
      afterTheChange: after.ttl ?? null,
      error: after.error ?? null,
    });
    for (const n of t.nodes) {
      const g = await get(c, n, 'session/long');
      t.check("a live lease's key is still there", g.ok && g.value === 'long', { node: n, value: g.value ?? null, error: g.error ?? null });
    }
    const w = await put(t, c, [third, ...t.nodes.filter((n) => n !== third)], 'after', 'x');
    t.check('writes go on after the leader changes', ok(w), { error: why(w) ?? null });
  },
};
