// forget-node — CLUSTER RESET and CLUSTER FORGET sent to every node, and the requests
// CLUSTER FORGET must refuse.
import { poll } from '../../lib/scenario-lib.mjs';
import { connect, keyHashSlot } from './lib/client.mjs';

const MEMBERS = ['n1', 'n2', 'n3', 'n4'];

export default {
  name: 'forget-node',
  description:
    'CLUSTER FORGET refuses to forget the node itself, a replica\'s own master and an unknown node, and CLUSTER ' +
    'RESET refuses a master serving slots. Replica n5 then gets CLUSTER RESET and every remaining node gets ' +
    'CLUSTER FORGET n5, one after another: no remaining node may list n5 then or during the next 15 s (past ' +
    'the blacklist time); n5 knows no other node; the cluster stays ok and the first shard takes writes with ' +
    'n4 in sync.',
  timeoutMs: 90000,
  async run(t) {
    const kv = await connect(t, 'client-admin');
    t.check('the cluster is stable', await kv.waitForStable(30000));
    const refused = [
      ['n2', { id: 'n2' }],
      ['n4', { id: 'n1' }],
      ['n3', { id: 'n9' }],
    ];
    for (const [node, body] of refused) {
      const r = await kv.send(node, 'ClusterForget', body);
      t.check('CLUSTER FORGET refuses', r.ok === false, { node, body, reply: r });
    }
    const busy = await kv.send('n1', 'ClusterReset', {});
    t.check('CLUSTER RESET refuses a master serving slots', busy.ok === false, { reply: busy });
    t.check('the cluster is still stable', await kv.waitForStable(10000));

    const reset = await kv.send('n5', 'ClusterReset', {});
    t.check('CLUSTER RESET on n5 is accepted', reset.ok === true, { reply: reset });
    for (const n of MEMBERS) {
      const r = await kv.send(n, 'ClusterForget', { id: 'n5' });
      t.check('CLUSTER FORGET n5 is answered', r.ok === true || r.error === 'Unknown node n5', { node: n, reply: r });
    }
    t.check('no remaining node lists n5', (await kv.knownBy('n5', MEMBERS)).length === 0);
    const watch = t.deadline(15000);
    let back = [];
    while (back.length === 0 && !watch.expired) {
      await t.sleep(500);
      back = await kv.knownBy('n5', MEMBERS);
    }
    t.check('n5 stays forgotten', back.length === 0, { knownBy: back });
    const own = await kv.send('n5', 'ClusterNodes', {});
    t.check('n5 knows no other node', own.ok === true && own.nodes.length === 1 && own.nodes[0].id === 'n5', { reply: own });

    const keys = [];
    for (let i = 0; keys.length < 10; i++) if (kv.slots[keyHashSlot(`doc:${i}`)] === 'n1') keys.push(`doc:${i}`);
    for (const k of keys) t.check('set is acknowledged', (await kv.set(k, `v-${k}`)).ok === true, { key: k });
    t.check('n4 is in sync with n1', (await kv.waitForReplicas(['n4'])) !== null, { infos: await kv.infos(MEMBERS) });
    const ok = await poll(t, () => kv.infos(MEMBERS), { timeoutMs: 5000, done: (i) => MEMBERS.every((n) => i[n]?.ok && i[n].clusterState === 'ok') });
    t.check('the cluster stays ok', ok.ok, { infos: ok.value });
  },
};
