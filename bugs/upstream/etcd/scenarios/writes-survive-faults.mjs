// writes-survive-faults — acknowledged writes, compaction and revisions through a
// partition of the leader and a member's crash and restart.
import { agreedLeader, call, del, get, memberIds, ok, put, revisionOf, why } from './lib/etcd.mjs';

export default {
  name: 'writes-survive-faults',
  description:
    'Three members take writes, overwrites and a delete; the history is compacted up to the latest write. The leader ' +
    'is partitioned from the others while they take more writes, the partition heals, and a member is killed and ' +
    'restarted. A leader must exist after the faults, every member must serve every acknowledged write with the same ' +
    'revision, and every member (the restarted one too) must refuse reads below the compaction and serve reads above it.',
  timeoutMs: 180000,
  async run(t) {
    const c = await t.client('client-ops');
    const ids = await memberIds(t, c);
    const first = await agreedLeader(t, c, ids);
    const order = (l) => [l, ...t.nodes.filter((n) => n !== l)];
    const expected = {};
    const write = async (nodes, key, value) => {
      const r = await put(t, c, nodes, key, value);
      t.check('put is acknowledged', ok(r), { key, error: why(r) ?? null });
      expected[key] = value;
      return revisionOf(r);
    };

    for (let i = 0; i < 8; i++) await write(order(first), `k${i}`, 'v1');
    const old = await write(order(first), 'k8', 'v1');
    for (let i = 0; i < 4; i++) await write(order(first), `k${i}`, 'v2');
    const d = await del(t, c, order(first), 'k4');
    t.check('delete is acknowledged', ok(d), { error: why(d) ?? null });
    delete expected.k4;
    // The newest revision at the compaction is a write.
    const at = await write(order(first), 'k5', 'v2');
    const compact = await call(c, first, 'Compact', { revision: String(at), physical: true }, 10000);
    t.check('compaction is acknowledged', ok(compact), { revision: at, error: why(compact) ?? null });
    for (const n of t.nodes) {
      await t.until(async () => {
        const r = await get(c, n, 'k0', { serializable: true, revision: old });
        return !r.ok && /compacted/.test(String(r.error));
      }, { timeoutMs: 15000, everyMs: 200, description: `${n} to apply the compaction at ${at}` });
    }

    // The leader is cut off; the majority elects another and takes writes.
    const rest = t.nodes.filter((n) => n !== first);
    t.partition([[first], rest]);
    await t.sleep(500);
    for (let i = 10; i < 15; i++) await write(rest, `k${i}`, 'p');
    t.heal();
    const second = await agreedLeader(t, c, ids, t.nodes, 30000);
    t.note('leader after the heal', { first, second });

    // A member crashes and comes back.
    const victim = t.nodes[Math.floor(t.random() * t.nodes.length)];
    await t.kill(victim);
    await t.sleep(300);
    await t.restart(victim);
    const leader = await agreedLeader(t, c, ids, t.nodes, 30000);
    t.check('a leader exists after the faults', t.nodes.includes(leader), { leader, restarted: victim });
    const lastRev = await write(order(leader), 'k15', 'after');

    const mods = {};
    for (const n of t.nodes) {
      await t.until(async () => {
        const g = await get(c, n, 'k15', { serializable: true });
        return g.ok && g.value === 'after';
      }, { timeoutMs: 20000, everyMs: 200, description: `${n} to apply the last write` });
      const wrong = {};
      for (const [k, v] of Object.entries(expected)) {
        const g = await get(c, n, k);
        if (!g.ok || g.value !== v) wrong[k] = g.ok ? (g.value ?? null) : `error: ${g.error}`;
        mods[k] ??= {};
        mods[k][n] = g.modRevision ?? null;
      }
      t.check('every acknowledged write is readable on every member', Object.keys(wrong).length === 0, { node: n, restarted: n === victim, wrong });
      const gone = await get(c, n, 'k4');
      t.check('a deleted key stays deleted', gone.ok && gone.value === undefined, { node: n, value: gone.value ?? null, error: gone.error ?? null });
      const below = await get(c, n, 'k0', { serializable: true, revision: old });
      t.check('a read below the compaction is refused', !below.ok && /compacted/.test(String(below.error)), { node: n, restarted: n === victim, revision: old, value: below.value ?? null, error: below.error ?? null });
      const above = await get(c, n, 'k0', { serializable: true, revision: at });
      t.check('a read at the compaction is served', above.ok && above.value === 'v2', { node: n, restarted: n === victim, revision: at, value: above.value ?? null, error: above.error ?? null });
    }
    const split = Object.entries(mods).filter(([, byNode]) => new Set(Object.values(byNode)).size !== 1);
    t.check('every member gives each key the same revision', split.length === 0, { split: Object.fromEntries(split) });
    t.check('the last write has the revision it was acknowledged with', Object.values(mods.k15).every((r) => r === lastRev), { acknowledged: lastRev, members: mods.k15 });
  },
};
