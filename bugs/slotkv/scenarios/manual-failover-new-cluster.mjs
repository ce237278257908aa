// manual-failover-new-cluster — CLUSTER FAILOVER on a cluster that has just been set up.
import { connect, keyHashSlot } from './lib/client.mjs';

const ATTEMPTS = 3;

export default {
  name: 'manual-failover-new-cluster',
  description:
    'A cluster has just been created; clients have started writing to the second and third shards. Before ' +
    'any key reaches the first shard, the operator moves its master role from n1 to replica n4 with CLUSTER ' +
    `FAILOVER, retried up to ${ATTEMPTS} times, each given 5 s to complete. n4 must take over; afterwards the ` +
    "first shard's keys are written to n4 and read back, and n1 and n5 follow n4 with the same data.",
  timeoutMs: 90000,
  async run(t) {
    const kv = await connect(t, 'client-ops');
    t.check('the cluster is stable', await kv.waitForStable(30000));
    const elsewhere = [];
    for (let i = 0; elsewhere.length < 10; i++) if (['n2', 'n3'].includes(kv.slots[keyHashSlot(`cart:${i}`)])) elsewhere.push(`cart:${i}`);
    for (const k of elsewhere) t.check('set is acknowledged', (await kv.set(k, `v-${k}`)).ok === true, { key: k });
    t.check('n4 and n5 are connected to n1', (await kv.waitForReplicas(['n4', 'n5'])) !== null, { infos: await kv.infos() });

    let done = false;
    for (let attempt = 1; attempt <= ATTEMPTS && !done; attempt++) {
      const won = t.background(async () => {
        try {
          await t.waitFor((e) => e.kind === 'log' && e.node === 'n4' && e.msg === 'failover election won', { timeoutMs: 5000, description: 'n4 to complete the manual failover' });
          return true;
        } catch {
          return false;
        }
      });
      const r = await kv.send('n4', 'ClusterFailover', {});
      t.check('CLUSTER FAILOVER is accepted', r.ok === true, { attempt, reply: r });
      done = await won;
      t.note('manual failover attempt', { attempt, done });
    }
    t.check('the manual failover completes', done, { infos: await kv.infos() });
    if (!done) return;

    t.check('the cluster is stable after the failover', await kv.waitForStable(30000));
    const keys = [];
    for (let i = 0; keys.length < 10; i++) if (kv.slots[keyHashSlot(`user:${i}`)] === 'n4') keys.push(`user:${i}`);
    t.check("n4 serves the first shard's slots", keys.length === 10, { slots: kv.slots });
    for (const k of keys) t.check('writes to the first shard succeed', (await kv.set(k, `v-${k}`)).ok === true, { key: k });
    for (const k of keys) {
      const g = await kv.get(k);
      t.check('writes to the first shard read back', g.ok === true && g.value === `v-${k}`, { key: k, reply: g });
    }
    const infos = await kv.waitForReplicas(['n1', 'n5'], 10000);
    t.check('n1 and n5 follow n4', infos !== null && infos.n1.master === 'n4' && infos.n5.master === 'n4', { infos: await kv.infos() });
    const states = await Promise.all(['n4', 'n1', 'n5'].map((n) => t.state(n)));
    t.check('the shard holds the same data everywhere', new Set(states.map((s) => s.digest)).size === 1, { digests: states.map((s) => s.digest) });
  },
};
