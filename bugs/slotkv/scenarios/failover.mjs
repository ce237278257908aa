// failover — losing a master.
import { connect, keyHashSlot } from './lib/client.mjs';

export default {
  name: 'failover',
  description:
    "The master of the first shard is killed: the cluster marks it FAIL, one of its replicas wins the election " +
    'and serves its slots, acknowledged writes that reached the replicas survive and new writes succeed; the old ' +
    'master is restarted and comes back as a replica of the new one with the same data.',
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-failover');
    t.check('the cluster is stable', await kv.waitForStable(30000));
    const keys = Array.from({ length: 40 }, (_, i) => `k:${i}`).filter((k) => kv.slots[keyHashSlot(k)] === 'n1');
    for (const k of keys) t.check('set is acknowledged', (await kv.set(k, `before-${k}`)).ok === true, { key: k });
    t.check('replicas catch up', (await kv.waitForReplicas(['n4', 'n5'])) !== null);

    const won = t.background(() => t.waitFor((e) => e.kind === 'log' && e.msg === 'failover election won', { timeoutMs: 15000, description: 'a replica to win the election' }));
    await t.kill('n1');
    const ev = await won;
    const promoted = ev.node;
    t.note('new master', { node: promoted, epoch: ev.fields?.epoch ?? null });
    t.check('the cluster is stable again', await kv.waitForStable(30000));
    t.check("the old master's slots moved to the promoted replica", keys.every((k) => kv.slots[keyHashSlot(k)] === promoted), { slots: kv.slots });
    for (const k of keys) {
      const r = await kv.get(k);
      t.check('writes acknowledged before the failover survive', r.ok === true && r.value === `before-${k}`, { key: k, reply: r });
    }
    for (const k of keys) t.check('writes succeed after the failover', (await kv.set(k, `after-${k}`)).ok === true, { key: k });

    await t.restart('n1');
    const other = promoted === 'n4' ? 'n5' : 'n4';
    const infos = await kv.waitForReplicas(['n1', other], 10000);
    t.check('the old master rejoins as a replica of the new one', infos !== null && infos.n1.master === promoted, { infos: await kv.infos() });
    const states = await Promise.all(['n1', promoted, other].map((n) => t.state(n)));
    t.check('the shard holds the same data everywhere', new Set(states.map((s) => s.digest)).size === 1, { digests: states.map((s) => s.digest) });
  },
};
