// manual-failover-expiring-keys — CLUSTER FAILOVER on a replica while the
// master's keys with a time to live are running out.
import { connect, deadline, keyHashSlot } from './lib/client.mjs';

const TEMPS = 600;
const FIRST_TTL_MS = 2500;
const TTL_STEP_MS = 10;

export default {
  name: 'manual-failover-expiring-keys',
  description:
    `The first shard's master n1 holds 20 permanent keys and ${TEMPS} keys whose times to live run out one after ` +
    `another over ${(TEMPS * TTL_STEP_MS) / 1000} s. Once its replicas are in sync and the first of those keys are ` +
    'gone, CLUSTER FAILOVER is sent to replica n4. n4 must take over the slots within a few seconds, permanent keys ' +
    'must stay readable, writes must succeed, the old master and the other replica must follow n4, and the expired ' +
    'keys must be reclaimed.',
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-ops');
    t.check('the cluster is stable', await kv.waitForStable(30000));
    const inShard = (prefix, n) => {
      const out = [];
      for (let i = 0; out.length < n; i++) if (kv.slots[keyHashSlot(`${prefix}${i}`)] === 'n1') out.push(`${prefix}${i}`);
      return out;
    };
    const perms = inShard('user:', 20);
    const temps = inShard('session:', TEMPS);
    t.check('permanent keys are written', await kv.pipelineSet(perms.map((key) => ({ key, value: `v-${key}` }))));
    const allExpired = deadline(t, FIRST_TTL_MS + TEMPS * TTL_STEP_MS + 1000);
    t.check('keys with a time to live are written', await kv.pipelineSet(temps.map((key, i) => ({ key, value: 's', px: FIRST_TTL_MS + i * TTL_STEP_MS }))));
    t.check('replicas are in sync', (await kv.waitForReplicas(['n4', 'n5'])) !== null, { infos: await kv.infos() });

    const written = perms.length + temps.length;
    let size = written;
    while (size >= written && !allExpired.expired) {
      await t.sleep(50);
      size = (await kv.send('n1', 'DbSize', {})).size ?? written;
    }
    t.note('keys are expiring on n1', { dbsize: size });

    const won = t.waitFor((e) => e.kind === 'log' && e.node === 'n4' && e.msg === 'failover election won', {
      timeoutMs: 8000,
      description: 'n4 to complete the manual failover',
    });
    won.catch(() => {});
    const r = await kv.send('n4', 'ClusterFailover', {});
    t.check('CLUSTER FAILOVER is accepted', r.ok === true, { reply: r });
    await won;

    t.check('the cluster is stable after the failover', await kv.waitForStable(30000));
    t.check("n4 serves the first shard's slots", perms.every((k) => kv.slots[keyHashSlot(k)] === 'n4'), { slots: kv.slots });
    for (const k of perms) {
      const g = await kv.get(k);
      t.check('permanent keys are readable after the failover', g.ok === true && g.value === `v-${k}`, { key: k, reply: g });
    }
    for (const k of perms.slice(0, 5)) t.check('writes succeed after the failover', (await kv.set(k, `v-${k}`)).ok === true, { key: k });

    while (!allExpired.expired) await t.sleep(200);
    const followed = await kv.waitForReplicas(['n1', 'n5'], 20000);
    t.check('the old master and the other replica follow n4', followed !== null && followed.n1.master === 'n4' && followed.n5.master === 'n4', { infos: await kv.infos() });
    let total = 0;
    for (const n of ['n2', 'n3', 'n4']) total += (await kv.send(n, 'DbSize', {})).size ?? 0;
    t.check('expired keys are reclaimed without being read', total === perms.length, { total, expected: perms.length });
  },
};
