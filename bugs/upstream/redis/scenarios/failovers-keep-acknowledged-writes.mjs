// failovers-keep-acknowledged-writes — two failovers in a row, each after the replicas caught up.
import { call, caughtUp, clusterOk, formCluster, keysIn, masterOf, role, set } from './lib/redis.mjs';

const SHARDS = [['n1', 0, 5460], ['n2', 5461, 10922], ['n3', 10923, 16383]];

export default {
  name: 'failovers-keep-acknowledged-writes',
  description:
    'Five servers form a Redis Cluster: n1, n2 and n3 are masters, n4 and n5 replicas of n1. Keys are written to ' +
    "every shard. n1 stalls and one of its replicas takes over; n1 comes back as a replica. Once every replica has " +
    'caught up, the new master is killed, the shard fails over again, and the killed server restarts and rejoins. ' +
    'After each failover the shard must have exactly one master within 20 s, the cluster must be ok, every ' +
    'acknowledged write (replicated before the fault) must be readable and new writes accepted.',
  timeoutMs: 180000,
  async run(t) {
    const c = await t.client('client-ops');
    const ids = await formCluster(t, c, { masters: SHARDS, replicas: { n4: 'n1', n5: 'n1' } });
    const written = new Map();
    const write = async (node, keys, round) => {
      for (const k of keys) {
        const r = await set(c, node, k, `${round}-${k}`);
        t.check('a write is acknowledged', r.ok, { node, key: k, error: r.error ?? null });
        if (r.ok) written.set(k, `${round}-${k}`);
      }
    };
    for (const [n, from, to] of SHARDS) await write(n, keysIn(`a-${n}`, from, to, 10), 'a');
    await caughtUp(t, c, 'n1', ['n4', 'n5'], 20000);

    const failover = async (from, candidates, what) => {
      const next = await t
        .until(async () => {
          const seen = await Promise.all(['n2', 'n3'].map((v) => masterOf(c, v, 0, ids)));
          const m = seen[0];
          return m !== undefined && m !== from && candidates.includes(m) && seen.every((s) => s === m) && (await role(c, m))?.role === 'master' ? m : undefined;
        }, { timeoutMs: 20000, everyMs: 250, description: `a replica of ${from} to take over (${what})` })
        .catch(() => undefined);
      t.check('the shard has a master again after a failover', next !== undefined, { failed: from, what });
      await clusterOk(t, c, ['n2', 'n3', next], 15000);
      return next;
    };
    const readAll = async (shardMaster) => {
      const lost = [];
      for (const [k, v] of written) {
        const owner = k.startsWith('a-n1') || k.startsWith('b-') || k.startsWith('c-') ? shardMaster : k.startsWith('a-n2') ? 'n2' : 'n3';
        const r = await call(c, owner, 'Get', { key: k }, 2000);
        if (!(r.ok && r.data === v)) lost.push({ key: k, node: owner, got: r.data ?? null, error: r.error ?? null });
      }
      t.check('every acknowledged write is readable', lost.length === 0, { lost: lost.slice(0, 5), count: lost.length });
    };

    // A stalled master: one of its two replicas takes over.
    await t.pause('n1');
    const second = await failover('n1', ['n4', 'n5'], 'n1 stalled');
    await readAll(second);
    await write(second, keysIn('b', 0, 5460, 10), 'b');
    await t.resume('n1');
    const others = ['n1', 'n4', 'n5'].filter((n) => n !== second);
    await caughtUp(t, c, second, others, 30000);

    // A crashed master, its replicas caught up: one of them takes over, and the crashed one rejoins.
    await t.kill(second);
    const third = await failover(second, others, `${second} killed`);
    await readAll(third);
    await write(third, keysIn('c', 0, 5460, 10), 'c');
    await t.restart(second);
    await caughtUp(t, c, third, ['n1', 'n4', 'n5'].filter((n) => n !== third), 30000);
    await clusterOk(t, c, t.nodes, 15000);
    const masters = await Promise.all(['n1', 'n4', 'n5'].map(async (n) => ((await role(c, n))?.role === 'master' ? n : undefined)));
    t.check('the shard has exactly one master', masters.filter(Boolean).length === 1, { masters: masters.filter(Boolean) });
    await readAll(third);
    const w = await set(c, third, keysIn('after-both', 0, 5460, 1)[0], 'v');
    t.check('the shard accepts writes', w.ok, { error: w.error ?? null });
  },
};
