// second-master-failure — a shard loses its master, and then the replica that took over.
import { call, caughtUp, clusterOk, formCluster, infoField, keysIn, masterOf, role, set } from './lib/redis.mjs';

/** How long the shard may stay without a master once its second master has failed (node timeout 2 s; an election takes a few seconds). */
const TAKEOVER_MS = 20000;

export default {
  name: 'second-master-failure',
  description:
    'Five servers form a Redis Cluster: n1, n2 and n3 are masters, n4 and n5 replicas of n1. Keys are written to ' +
    "n1's slots and both replicas catch up. n5 stalls (SIGSTOP) and so does n1, and the cluster promotes n4; n4 stalls " +
    'in turn, and n5 comes back. The shard must get a master again within 20 s (n5, its last replica), the ' +
    'cluster must be ok again, the keys must be readable and a new write accepted.',
  timeoutMs: 120000,
  async run(t) {
    const c = await t.client('client-ops');
    const ids = await formCluster(t, c, { masters: [['n1', 0, 5460], ['n2', 5461, 10922], ['n3', 10923, 16383]], replicas: { n4: 'n1', n5: 'n1' } });
    const keys = keysIn('order', 0, 5460, 20);
    for (const k of keys) {
      const r = await set(c, 'n1', k, `v-${k}`);
      t.check('a write is acknowledged', r.ok, { key: k, error: r.error ?? null });
    }
    await caughtUp(t, c, 'n1', ['n4', 'n5'], 20000);

    // n5 stalls first, so n4 alone stands when n1 goes.
    await t.pause('n5');
    await t.pause('n1');
    const second = await t.until(async () => {
      const seen = await Promise.all(['n2', 'n3'].map((v) => masterOf(c, v, 0, ids)));
      return seen.every((m) => m === 'n4') && (await role(c, 'n4'))?.role === 'master' ? 'n4' : undefined;
    }, { timeoutMs: 30000, everyMs: 200, description: 'n4 to take over from n1' });
    t.note('the shard has a new master', { master: second });

    await t.pause('n4');
    await t.resume('n5');
    const started = Date.now();
    let third;
    try {
      third = await t.until(async () => {
        const seen = await Promise.all(['n2', 'n3'].map((v) => masterOf(c, v, 0, ids)));
        return seen.every((m) => m === 'n5') && (await role(c, 'n5'))?.role === 'master' ? 'n5' : undefined;
      }, { timeoutMs: TAKEOVER_MS, everyMs: 250, description: 'n5 to take over from n4' });
    } catch {
      // the check below says what the cluster looks like
    }
    const info = await call(c, 'n2', 'ClusterInfo', {}, 2000);
    const n5 = await call(c, 'n5', 'Info', { section: 'replication' }, 2000);
    t.check('the shard has a master again after its second master failed', third === 'n5', {
      waitedMs: Date.now() - started,
      clusterState: infoField(info.data, 'cluster_state') ?? null,
      n5Role: infoField(n5.data, 'role') ?? null,
      n5MasterLink: infoField(n5.data, 'master_link_status') ?? null,
    });

    await clusterOk(t, c, ['n2', 'n3', 'n5'], 15000);
    const lost = [];
    for (const k of keys) {
      const r = await call(c, 'n5', 'Get', { key: k }, 2000);
      if (!(r.ok && r.data === `v-${k}`)) lost.push({ key: k, got: r.data ?? null, error: r.error ?? null });
    }
    t.check('every acknowledged write is readable from the new master', lost.length === 0, { lost: lost.slice(0, 5), count: lost.length });
    const w = await set(c, 'n5', keysIn('order-after', 0, 5460, 1)[0], 'v');
    t.check('the new master accepts writes', w.ok, { error: w.error ?? null });
    await t.resume('n4');
    await t.resume('n1');
  },
};
