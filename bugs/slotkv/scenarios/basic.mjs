// basic — the everyday behaviour of a healthy cluster.
import { connect, keyHashSlot } from './lib/client.mjs';

export default {
  name: 'basic',
  description:
    'A healthy cluster: every node agrees on the slot owners; writes and reads go to the master of each ' +
    "key's slot, others answer MOVED; keys with a time to live vanish once it passes while others stay; the " +
    "first shard's replicas end with the same data as their master.",
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-basic');
    t.check('the cluster is stable', await kv.waitForStable(30000));
    const key = 'probe';
    const wrong = t.nodes.find((n) => n !== kv.slots[keyHashSlot(key)]);
    const moved = await kv.send(wrong, 'Set', { key, value: 'x' });
    t.check('a node that does not serve the slot answers MOVED', moved.error === 'MOVED' && moved.owner === kv.slots[keyHashSlot(key)], { moved });

    const expected = {};
    for (let i = 0; i < 30; i++) {
      const r = await kv.set(`key:${i}`, `v${i}`);
      t.check('set is acknowledged', r.ok === true, { key: `key:${i}`, reply: r });
      expected[`key:${i}`] = `v${i}`;
    }
    for (let i = 0; i < 30; i += 3) {
      const r = await kv.get(`key:${i}`);
      t.check('get returns the last value', r.ok === true && r.value === `v${i}`, { key: `key:${i}`, reply: r });
    }
    const ttlOk = await kv.pipelineSet(Array.from({ length: 20 }, (_, i) => ({ key: `ttl:${i}`, value: 't', px: 300 })));
    t.check('keys with a time to live are written', ttlOk);
    await t.sleep(1200);
    for (let i = 0; i < 20; i += 4) {
      const r = await kv.get(`ttl:${i}`);
      t.check('a key is gone once its time to live passes', r.ok === true && r.found === false, { key: `ttl:${i}`, reply: r });
    }
    let total = 0;
    for (const n of ['n1', 'n2', 'n3']) total += (await kv.send(n, 'DbSize', {})).size ?? 0;
    t.check('expired keys are reclaimed without being read', total === 30, { total });

    const infos = await kv.waitForReplicas(['n4', 'n5']);
    t.check("the first shard's replicas catch up with their master", infos !== null, { infos: await kv.infos() });
    const states = await Promise.all(['n1', 'n4', 'n5'].map((n) => t.state(n)));
    t.check('replicas hold the same data as their master', new Set(states.map((s) => s.digest)).size === 1, { digests: states.map((s) => s.digest) });
  },
};
