// manual-failover — CLUSTER FAILOVER to a replica that lags behind its master.
import { connect, keyHashSlot } from './lib/client.mjs';

/** Extra delay on every message from n1 to n4: n4 applies n1's stream this much later. */
const LAG_MS = 400;

export default {
  name: 'manual-failover',
  description:
    `Keys are written to the first shard and replicated. Every message from n1 to replica n4 is then delayed by ` +
    `${LAG_MS} ms, a batch of writes is acknowledged by n1, and CLUSTER FAILOVER is sent to n4 at once. n4 must ` +
    'take over within a few seconds, serve every acknowledged write, accept new writes, and n1 and n5 must ' +
    'follow it with the same data.',
  timeoutMs: 90000,
  async run(t) {
    const kv = await connect(t, 'client-mf');
    t.check('the cluster is stable', await kv.waitForStable(30000));
    const keys = [];
    for (let i = 0; keys.length < 30; i++) if (kv.slots[keyHashSlot(`order:${i}`)] === 'n1') keys.push(`order:${i}`);
    t.check('keys are written', await kv.pipelineSet(keys.map((key) => ({ key, value: `v1-${key}` }))));
    t.check('replicas are in sync', (await kv.waitForReplicas(['n4', 'n5'])) !== null, { infos: await kv.infos() });

    t.addLinkFault({ from: 'n1', to: 'n4', delayMs: [LAG_MS, LAG_MS] });
    t.check('new values are acknowledged', await kv.pipelineSet(keys.map((key) => ({ key, value: `v2-${key}` }))));
    const won = t.background(() => t.waitFor((e) => e.kind === 'log' && e.node === 'n4' && e.msg === 'failover election won', { timeoutMs: 8000, description: 'n4 to complete the manual failover' }));
    const r = await kv.send('n4', 'ClusterFailover', {});
    t.check('CLUSTER FAILOVER is accepted', r.ok === true, { reply: r });
    await won;
    t.clearLinkFaults();

    t.check('the cluster is stable after the failover', await kv.waitForStable(30000));
    t.check("n4 serves the first shard's slots", keys.every((k) => kv.slots[keyHashSlot(k)] === 'n4'), { slots: kv.slots });
    for (const k of keys) {
      const g = await kv.get(k);
      t.check('writes acknowledged before the failover survive', g.ok === true && g.value === `v2-${k}`, { key: k, reply: g });
    }
    for (const k of keys.slice(0, 10)) t.check('writes succeed after the failover', (await kv.set(k, `v3-${k}`)).ok === true, { key: k });
    const infos = await kv.waitForReplicas(['n1', 'n5'], 10000);
    t.check('n1 and n5 follow n4', infos !== null && infos.n1.master === 'n4' && infos.n5.master === 'n4', { infos: await kv.infos() });
    const states = await Promise.all(['n4', 'n1', 'n5'].map((n) => t.state(n)));
    t.check('the shard holds the same data everywhere', new Set(states.map((s) => s.digest)).size === 1, { digests: states.map((s) => s.digest) });
  },
};
