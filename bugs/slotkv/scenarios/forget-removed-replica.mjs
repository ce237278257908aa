// forget-removed-replica — taking a replica out of the cluster the way the upstream test
// does: CLUSTER RESET on the replica, then CLUSTER FORGET on one other node.
import { poll } from '../../lib/scenario-lib.mjs';
import { connect, keyHashSlot } from './lib/client.mjs';

const MEMBERS = ['n1', 'n2', 'n3', 'n4'];
/** Past the nodes blacklist time, so a node that forgot n5 could have learned of it again. */
const WATCH_MS = 15000;

export default {
  name: 'forget-removed-replica',
  description:
    'Replica n5 is taken out of the cluster: once the first shard holds keys and both replicas are in sync, n5 ' +
    'gets CLUSTER RESET, and CLUSTER FORGET n5 is sent to one of the remaining nodes, picked at random. Within ' +
    `5 s no remaining node may list n5, and none may list it again during the next ${WATCH_MS / 1000} s; the ` +
    "cluster stays ok, writes to the first shard succeed and n4 stays in sync with n1.",
  timeoutMs: 90000,
  async run(t) {
    const kv = await connect(t, 'client-ops');
    t.check('the cluster is stable', await kv.waitForStable(30000));
    const keys = [];
    for (let i = 0; keys.length < 10; i++) if (kv.slots[keyHashSlot(`item:${i}`)] === 'n1') keys.push(`item:${i}`);
    for (const k of keys) t.check('set is acknowledged', (await kv.set(k, `v1-${k}`)).ok === true, { key: k });
    t.check('replicas are in sync', (await kv.waitForReplicas(['n4', 'n5'])) !== null, { infos: await kv.infos() });

    const reset = await kv.send('n5', 'ClusterReset', {});
    t.check('CLUSTER RESET on n5 is accepted', reset.ok === true, { reply: reset });
    const via = MEMBERS[Math.floor(t.random() * MEMBERS.length)];
    const forget = await kv.send(via, 'ClusterForget', { id: 'n5' });
    t.check('CLUSTER FORGET n5 is accepted', forget.ok === true, { node: via, reply: forget });
    t.note('n5 forgotten', { via });

    const gone = await poll(t, () => kv.knownBy('n5', MEMBERS), { timeoutMs: 5000, everyMs: 200, done: (known) => known.length === 0 });
    t.check('no remaining node lists n5', gone.ok, { knownBy: gone.value, via });
    if (gone.ok) {
      const watch = t.deadline(WATCH_MS);
      let back = [];
      while (back.length === 0 && !watch.expired) {
        await t.sleep(500);
        back = await kv.knownBy('n5', MEMBERS);
      }
      t.check('n5 stays forgotten', back.length === 0, { knownBy: back });
    }

    for (const k of keys) t.check('writes succeed after n5 left', (await kv.set(k, `v2-${k}`)).ok === true, { key: k });
    const infos = await kv.waitForReplicas(['n4']);
    t.check('n4 stays in sync with n1', infos !== null, { infos: await kv.infos(MEMBERS) });
    const ok = await poll(t, () => kv.infos(MEMBERS), { timeoutMs: 5000, done: (i) => MEMBERS.every((n) => i[n]?.ok && i[n].clusterState === 'ok') });
    t.check('the cluster stays ok', ok.ok, { infos: ok.value });
  },
};
