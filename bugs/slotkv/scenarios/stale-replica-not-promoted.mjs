// stale-replica-not-promoted — a replica whose master link has long been down must not take over.
import { connect, keyHashSlot } from './lib/client.mjs';

export default {
  name: 'stale-replica-not-promoted',
  description:
    "Keys are written to the first shard (master n1, replicas n4 and n5) and replicated. n5 then loses every " +
    'link to n1 for much longer than the replica validity time while the keys are overwritten. n4 is paused, n1 ' +
    'is killed: n5 must not win an election with its old data. Once n4 resumes it takes over, every ' +
    'acknowledged write reads back and new writes succeed.',
  timeoutMs: 150000,
  async run(t) {
    const kv = await connect(t, 'client-stale');
    t.check('the cluster is stable', await kv.waitForStable(30000));
    const keys = [];
    for (let i = 0; keys.length < 20; i++) if (kv.slots[keyHashSlot(`acct:${i}`)] === 'n1') keys.push(`acct:${i}`);
    for (const k of keys) t.check('set is acknowledged', (await kv.set(k, `old-${k}`)).ok === true, { key: k });
    t.check('replicas are in sync', (await kv.waitForReplicas(['n4', 'n5'])) !== null, { infos: await kv.infos() });

    t.addLinkFault({ from: 'n1', to: 'n5', drop: 1 });
    t.addLinkFault({ from: 'n5', to: 'n1', drop: 1 });
    for (const k of keys) t.check('set is acknowledged', (await kv.set(k, `new-${k}`)).ok === true, { key: k });
    t.check('n4 has the new values', (await kv.waitForReplicas(['n4'])) !== null, { infos: await kv.infos() });
    // Far past the validity time (replPingPeriodMs + nodeTimeoutMs * replicaValidityFactor, plus nodeTimeoutMs).
    await t.sleep(24000);

    const won = t.background(() => t.waitFor((e) => e.kind === 'log' && e.msg === 'failover election won', { timeoutMs: 40000, description: 'a replica to replace n1' }));
    await t.pause('n4');
    await t.kill('n1');
    t.clearLinkFaults();
    await t.sleep(10000);
    await t.resume('n4');
    const ev = await won;
    t.check('the replica with old data is not promoted; the up-to-date one is', ev.node === 'n4', { winner: ev.node });
    t.check('the cluster is stable again', await kv.waitForStable(30000));
    for (const k of keys) {
      const r = await kv.get(k);
      t.check('acknowledged writes survive the failover', r.ok === true && r.value === `new-${k}`, { key: k, reply: r });
    }
    for (const k of keys.slice(0, 5)) t.check('writes succeed afterwards', (await kv.set(k, `after-${k}`)).ok === true, { key: k });
  },
};
