// consecutive-master-failures — the first shard loses its master, then the
// replica that replaced it, before the remaining replica has synced with it.
import { connect, keyHashSlot } from './lib/client.mjs';

export default {
  name: 'consecutive-master-failures',
  description:
    "Keys are written to the first shard (master n1, replicas n4 and n5) and replicated. The replicas' " +
    'synchronisation requests to each other are lost. n1 is killed and one replica wins the election; as soon as ' +
    'the other starts to follow the winner, the winner is killed too. The last replica must take over the ' +
    'slots, keep the data, and accept writes.',
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-ops');
    t.check('the cluster is stable', await kv.waitForStable(30000));
    const keys = [];
    for (let i = 0; keys.length < 30; i++) if (kv.slots[keyHashSlot(`order:${i}`)] === 'n1') keys.push(`order:${i}`);
    for (const k of keys) t.check('set is acknowledged', (await kv.set(k, `v-${k}`)).ok === true, { key: k });
    t.check('replicas are in sync', (await kv.waitForReplicas(['n4', 'n5'])) !== null, { infos: await kv.infos() });

    t.addLinkFault({ from: 'n4', to: 'n5', type: 'Psync', drop: 1 });
    t.addLinkFault({ from: 'n5', to: 'n4', type: 'Psync', drop: 1 });

    const first = t.background(() => t.waitFor((e) => e.kind === 'log' && e.msg === 'failover election won', { timeoutMs: 15000, description: 'a replica to replace n1' }));
    await t.kill('n1');
    const b = (await first).node;
    const c = b === 'n4' ? 'n5' : 'n4';
    t.note('first failover', { winner: b, other: c });
    await t.waitFor((e) => e.kind === 'log' && e.node === c && e.msg === 'connecting to master' && e.fields?.master === b, {
      timeoutMs: 10000,
      description: `${c} to start following ${b}`,
      includePast: true,
    });
    await t.sleep(300);

    const second = t.background(() => t.waitFor((e) => e.kind === 'log' && e.node === c && e.msg === 'failover election won', {
      timeoutMs: 15000,
      description: `${c} to take over after ${b} fails`,
    }));
    await t.kill(b);
    await second;
    t.clearLinkFaults();

    t.check('the cluster is stable again', await kv.waitForStable(30000));
    t.check(`${c} serves the first shard's slots`, keys.every((k) => kv.slots[keyHashSlot(k)] === c), { slots: kv.slots });
    for (const k of keys) {
      const r = await kv.get(k);
      t.check('replicated writes survive both failures', r.ok === true && r.value === `v-${k}`, { key: k, reply: r });
    }
    for (const k of keys.slice(0, 10)) t.check('writes succeed afterwards', (await kv.set(k, `w-${k}`)).ok === true, { key: k });
  },
};
