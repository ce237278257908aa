// replica-without-data-stays-replica — a replica that has no data must not take over.
import { call, caughtUp, clusterOk, formCluster, infoField, keysIn, masterOf, role, set } from './lib/redis.mjs';

/** How long the replica without data is watched while its master is down (an election would take a few seconds). */
const WATCH_MS = 12000;

export default {
  name: 'replica-without-data-stays-replica',
  description:
    'Five servers form a Redis Cluster: n1, n2 and n3 are masters, n4 and n5 replicas of n1. Keys are written to ' +
    "n1's slots. n4 stalls; n5 loses its link to n1 and restarts (without persistence it comes back empty), so it " +
    'never synchronises; then n1 stalls too. n5 must not take over with no data (the cluster stays down for the ' +
    'shard meanwhile); once n1 is back and the link heals, the cluster must be ok and every acknowledged write readable.',
  timeoutMs: 150000,
  async run(t) {
    const c = await t.client('client-ops');
    const ids = await formCluster(t, c, { masters: [['n1', 0, 5460], ['n2', 5461, 10922], ['n3', 10923, 16383]], replicas: { n4: 'n1', n5: 'n1' } });
    const keys = keysIn('stock', 0, 5460, 20);
    for (const k of keys) {
      const r = await set(c, 'n1', k, `v-${k}`);
      t.check('a write is acknowledged', r.ok, { key: k, error: r.error ?? null });
    }
    await caughtUp(t, c, 'n1', ['n4', 'n5'], 20000);

    await t.pause('n4');
    t.partition([['n5'], ['n1']]);
    await t.sleep(500);
    await t.kill('n5');
    await t.restart('n5');
    const n5Info = await call(c, 'n5', 'Info', { section: 'keyspace' }, 2000);
    t.note('n5 restarted without its link to n1', { keyspace: String(n5Info.data ?? '').trim() });
    await t.pause('n1');
    await t.until(async () => {
      const rows = await Promise.all(['n2', 'n3'].map((v) => masterOf(c, v, 0, ids)));
      return rows.every((m) => m === undefined);
    }, { timeoutMs: 15000, everyMs: 250, description: 'n1 to be flagged as failing' });

    const d = t.deadline(WATCH_MS);
    let tookOver;
    while (!d.expired && tookOver === undefined) {
      const [r, seen] = await Promise.all([role(c, 'n5'), masterOf(c, 'n2', 0, ids)]);
      if (r?.role === 'master' || seen === 'n5') tookOver = { n5Role: r?.role ?? null, masterSeenByN2: seen ?? null };
      else await t.sleep(250);
    }
    const n5 = await call(c, 'n5', 'Info', { section: 'replication' }, 2000);
    t.check('a replica that never synchronised does not take over', tookOver === undefined, {
      ...(tookOver ?? {}),
      n5MasterLink: infoField(n5.data, 'master_link_status') ?? null,
      n5LinkDownSinceSeconds: infoField(n5.data, 'master_link_down_since_seconds') ?? null,
    });

    await t.resume('n1');
    t.heal();
    await t.resume('n4');
    await clusterOk(t, c, t.nodes, 30000);
    const master = await t.until(() => masterOf(c, 'n2', 0, ids), { timeoutMs: 15000, everyMs: 250, description: "a master of n1's slots" });
    await caughtUp(t, c, master, ['n1', 'n4', 'n5'].filter((n) => n !== master), 30000);
    const lost = [];
    for (const k of keys) {
      const r = await call(c, master, 'Get', { key: k }, 2000);
      if (!(r.ok && r.data === `v-${k}`)) lost.push({ key: k, got: r.data ?? null, error: r.error ?? null });
    }
    t.check('every acknowledged write is readable', lost.length === 0, { master, lost: lost.slice(0, 5), count: lost.length });
    const w = await set(c, master, keysIn('stock-after', 0, 5460, 1)[0], 'v');
    t.check('the shard accepts writes', w.ok, { error: w.error ?? null });
  },
};
