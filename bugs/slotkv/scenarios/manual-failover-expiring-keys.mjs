// manual-failover-expiring-keys — CLUSTER FAILOVER, three times in a row, while the
// shard's keys with a time to live are running out.
import { poll } from '../../lib/scenario-lib.mjs';
import { connect, keyHashSlot } from './lib/client.mjs';

const TEMPS = 900;
const FIRST_TTL_MS = 2500;
const TTL_STEP_MS = 15;
/**
 * Each manual failover of the first shard: [the replica sent CLUSTER FAILOVER, the master it takes over from].
 * One failover can complete even on a master that keeps expiring keys while paused, when the replica happens to
 * check its offset before the next expiry reaches it (seen on containers under load); three in a row cannot.
 */
const FAILOVERS = [
  ['n4', 'n1'],
  ['n1', 'n4'],
  ['n5', 'n1'],
];
/** Masters vote for a replica of the same master at most once in 2 × nodeTimeoutMs (3 s); the wait before failing over from a master again. */
const REVOTE_MS = 3500;

export default {
  name: 'manual-failover-expiring-keys',
  description:
    `The first shard's master n1 holds 20 permanent keys and ${TEMPS} keys whose times to live run out one after ` +
    `another over ${(TEMPS * TTL_STEP_MS) / 1000} s. Once its replicas are in sync and the first of those keys are ` +
    'gone, the shard is failed over by hand three times: CLUSTER FAILOVER to replica n4, then to n1 (now a replica ' +
    'of n4), then to n5, each once the previous one is done and the next replica follows the new master. Each ' +
    'must complete within a few seconds; afterwards permanent keys must stay readable, writes must succeed, n1 ' +
    'and n4 must follow n5, and the expired keys must be reclaimed.',
  timeoutMs: 150000,
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
    const allExpired = t.deadline(FIRST_TTL_MS + TEMPS * TTL_STEP_MS + 1000);
    t.check('keys with a time to live are written', await kv.pipelineSet(temps.map((key, i) => ({ key, value: 's', px: FIRST_TTL_MS + i * TTL_STEP_MS }))));
    t.check('replicas are in sync', (await kv.waitForReplicas(['n4', 'n5'])) !== null, { infos: await kv.infos() });

    const written = perms.length + temps.length;
    let size = written;
    while (size >= written && !allExpired.expired) {
      await t.sleep(50);
      size = (await kv.send('n1', 'DbSize', {})).size ?? written;
    }
    t.note('keys are expiring on n1', { dbsize: size });

    const votedFor = new Map();
    for (const [replica, master] of FAILOVERS) {
      const gap = votedFor.get(master);
      while (gap && !gap.expired) await t.sleep(100);
      t.check(`${replica} follows ${master} and ${master} knows it`, await followsKnown(t, kv, replica, master, 20000), { infos: await kv.infos() });
      const won = t.background(() => t.waitFor((e) => e.kind === 'log' && e.node === replica && e.msg === 'failover election won', {
        timeoutMs: 8000,
        description: `${replica} to complete the manual failover`,
      }));
      const r = await kv.send(replica, 'ClusterFailover', {});
      t.check('CLUSTER FAILOVER is accepted', r.ok === true, { replica, reply: r });
      await won;
      votedFor.set(master, t.deadline(REVOTE_MS));
      t.note('manual failover done', { master: replica, dbsize: (await kv.send(replica, 'DbSize', {})).size ?? null, expiring: !allExpired.expired });
      t.check('the cluster is stable after the failover', await kv.waitForStable(30000), { master: replica });
    }

    const last = FAILOVERS.at(-1)[0];
    t.check(`${last} serves the first shard's slots`, perms.every((k) => kv.slots[keyHashSlot(k)] === last), { slots: kv.slots });
    for (const k of perms) {
      const g = await kv.get(k);
      t.check('permanent keys are readable after the failovers', g.ok === true && g.value === `v-${k}`, { key: k, reply: g });
    }
    for (const k of perms.slice(0, 5)) t.check('writes succeed after the failovers', (await kv.set(k, `v-${k}`)).ok === true, { key: k });

    while (!allExpired.expired) await t.sleep(200);
    const followed = await kv.waitForReplicas(['n1', 'n4'], 20000);
    t.check(`n1 and n4 follow ${last}`, followed !== null && followed.n1.master === last && followed.n4.master === last, { infos: await kv.infos() });
    // The active expire cycle reclaims a bounded number of keys per run, and the pauses of three failovers leave it a backlog.
    const dbSizes = async () => {
      let sum = 0;
      for (const n of [last, 'n2', 'n3']) sum += (await kv.send(n, 'DbSize', {})).size ?? 0;
      return sum;
    };
    const total = (await poll(t, dbSizes, { timeoutMs: 10000, everyMs: 200, done: (sum) => sum === perms.length })).value;
    t.check('expired keys are reclaimed without being read', total === perms.length, { total, expected: perms.length });
  },
};

/**
 * Waits until `replica` reports itself a connected replica of `master` and `master` lists it
 * as its replica (a manual failover request from a node the master does not know as its
 * replica is ignored).
 */
async function followsKnown(t, kv, replica, master, timeoutMs) {
  const known = async () => {
    const info = await kv.send(replica, 'Info', {}, 1000);
    const seen = info.ok && info.role === 'replica' && info.master === master && info.replState === 'CONNECTED';
    const state = seen ? await t.state(master).catch(() => null) : null;
    return state?.nodes?.some((n) => n.id === replica && n.role === 'replica' && n.master === master);
  };
  return (await poll(t, known, { timeoutMs })).ok;
}
