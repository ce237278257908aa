// restart-after-compaction — a member restarts after a compaction whose newest
// revisions were deletions.
import { agreedLeader, call, del, get, memberIds, ok, put, revisionOf, why } from './lib/etcd.mjs';

export default {
  name: 'restart-after-compaction',
  description:
    'Three members take writes: configuration keys that stay, and session keys that are written and then deleted. ' +
    'The history is compacted up to the latest revision, and one follower is killed and restarted. Every member ' +
    'must then serve reads of the configuration keys, and a new write must get the same revision on every member.',
  timeoutMs: 120000,
  async run(t) {
    const c = await t.client('client-ops');
    const ids = await memberIds(t, c);
    const leader = await agreedLeader(t, c, ids);
    t.note('leader', { leader });
    const order = [leader, ...t.nodes.filter((n) => n !== leader)];

    const expected = {};
    for (const k of ['a', 'b', 'c', 'd', 'e']) {
      const r = await put(t, c, order, `config/${k}`, `${k}-1`);
      t.check('put is acknowledged', ok(r), { key: `config/${k}`, error: why(r) ?? null });
      expected[`config/${k}`] = `${k}-1`;
    }
    // Short-lived session keys: written, then deleted, so the newest revisions are deletions.
    for (const s of ['w1', 'w2']) {
      const r = await put(t, c, order, `session/${s}`, 'alive');
      t.check('put is acknowledged', ok(r), { key: `session/${s}`, error: why(r) ?? null });
    }
    let top = 0;
    for (const s of ['w1', 'w2']) {
      const r = await del(t, c, order, `session/${s}`);
      t.check('delete is acknowledged', ok(r), { key: `session/${s}`, error: why(r) ?? null });
      top = revisionOf(r);
    }
    const compact = await call(c, leader, 'Compact', { revision: String(top), physical: true }, 10000);
    t.check('compaction is acknowledged', ok(compact), { revision: top, error: why(compact) ?? null });
    // Every member has applied the compaction once it refuses a read below it.
    for (const n of t.nodes) {
      await t.until(async () => {
        const r = await get(c, n, 'config/a', { serializable: true, revision: top - 1 });
        return !r.ok && /compacted/.test(String(r.error));
      }, { timeoutMs: 15000, everyMs: 200, description: `${n} to apply the compaction at ${top}` });
    }
    await t.sleep(1500);

    const followers = t.nodes.filter((n) => n !== leader);
    const victim = followers[Math.floor(t.random() * followers.length)];
    t.note('restarting a follower', { victim, compactedAt: top });
    await t.kill(victim);
    await t.sleep(500);
    await t.restart(victim);
    const after = await agreedLeader(t, c, ids);
    t.check('the members agree on a leader after the restart', t.nodes.includes(after), { leader: after });

    // Every member serves reads of what was written before the compaction.
    for (const n of t.nodes) {
      let last;
      const deadline = t.deadline(15000);
      for (;;) {
        last = await get(c, n, 'config/a');
        if ((last.ok && last.value === expected['config/a']) || deadline.expired) break;
        await t.sleep(250);
      }
      t.check('every member serves reads after the restart', last.ok && last.value === expected['config/a'], { node: n, restarted: n === victim, value: last.value ?? null, error: last.error ?? null });
    }

    const w = await put(t, c, [after, ...t.nodes.filter((n) => n !== after)], 'config/f', 'f-1');
    t.check('put after the restart is acknowledged', ok(w), { error: why(w) ?? null });
    expected['config/f'] = 'f-1';
    const revs = {};
    for (const n of t.nodes) {
      const r = await t.until(async () => {
        const g = await get(c, n, 'config/f', { serializable: true });
        return g.ok && g.value === 'f-1' ? g : undefined;
      }, { timeoutMs: 15000, everyMs: 200, description: `${n} to apply the write after the restart` });
      revs[n] = { modRevision: r.modRevision ?? null, revision: r.revision ?? null };
    }
    const mods = new Set(Object.values(revs).map((r) => r.modRevision));
    t.check('every member gives the new write the same revision', mods.size === 1 && revisionOf(w) === [...mods][0], { acknowledged: revisionOf(w), members: revs });

    for (const n of t.nodes) {
      const wrong = {};
      for (const [k, v] of Object.entries(expected)) {
        const g = await get(c, n, k);
        if (!g.ok || g.value !== v) wrong[k] = g.ok ? (g.value ?? null) : `error: ${g.error}`;
      }
      t.check('every acknowledged write is readable on every member', Object.keys(wrong).length === 0, { node: n, wrong });
    }
    const gone = await get(c, after, 'session/w1');
    t.check('deleted keys stay deleted', gone.ok && gone.value === undefined, { value: gone.value ?? null, error: gone.error ?? null });
  },
};
