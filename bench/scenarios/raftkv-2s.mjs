// A 2-second RaftKV workload for the simulation benchmark: elect, write, read, idle.
import { connect } from '../../bugs/raftkv/scenarios/lib/client.mjs';

export default {
  name: 'raftkv-2s',
  description: 'Two seconds of a 3-node RaftKV cluster: a leader is elected, ten writes and reads go through it, then it idles.',
  timeoutMs: 10000,
  async run(t) {
    const kv = await connect(t, 'client-bench');
    const leader = await kv.findLeader(1900);
    t.check('a leader is elected', leader !== null);
    for (let i = 0; i < 10; i++) {
      const r = await kv.put(`k${i}`, `v${i}`);
      t.check('put is acknowledged', r.ok === true, { reply: r });
    }
    for (let i = 0; i < 10; i++) {
      const r = await kv.get(`k${i}`);
      t.check('get returns the value', r.ok === true && r.value === `v${i}`, { reply: r });
    }
    const left = 2000 - (t.events().at(-1)?.ts ?? 0) / 1000;
    if (left > 0) await t.sleep(left);
  },
};
