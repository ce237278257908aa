// reads-across-a-split — leader reads while the network splits the servers in two.
import { addresses, agreedLeader, get, local, ok, put, status, why } from './lib/raftkv.mjs';

const VOTERS = ['n1', 'n2', 'n3'];
const REPLICA = 'n4';

export default {
  name: 'reads-across-a-split',
  description:
    'Three voters and a non-voting replica take a write. The network splits them in two: the leader with the ' +
    'replica on one side, the other two voters on the other, which elect a leader of their own and take an ' +
    'overwrite. For two seconds after the overwrite is acknowledged, every read a server answers as leader must ' +
    'return it, and then only the majority\'s leader may say it leads. The split heals; a leader must exist and ' +
    'every server must hold the overwrite.',
  timeoutMs: 120000,
  async run(t) {
    const c = await t.client('client-ops');
    const addrs = await addresses(t, c);
    const first = await agreedLeader(t, c, addrs);
    t.check('the leader is a voter', VOTERS.includes(first), { leader: first });
    const w1 = await put(t, c, [first], 'config', 'v1');
    t.check('the first write is acknowledged', ok(w1), { error: why(w1) ?? null });
    await t.until(async () => (await local(c, REPLICA, 'config')) === 'v1', { timeoutMs: 15000, everyMs: 200, description: 'the replica to apply the first write' });

    const rest = VOTERS.filter((n) => n !== first);
    t.partition([[first, REPLICA], rest]);
    const second = await agreedLeader(t, c, addrs, rest, 30000);
    const w2 = await put(t, c, [second], 'config', 'v2');
    t.check('the overwrite is acknowledged by the majority', ok(w2), { leader: second, error: why(w2) ?? null });

    // A read answered as leader after the overwrite was acknowledged must see it, on either side.
    const stale = [];
    const d = t.deadline(2000);
    while (!d.expired) {
      for (const n of t.nodes) {
        const r = await get(c, n, 'config');
        if (r.ok && r.value !== 'v2') stale.push({ node: n, value: r.value ?? null });
      }
      await t.sleep(250);
    }
    const leaders = [];
    for (const n of t.nodes) if ((await status(c, addrs, n))?.state === 'Leader') leaders.push(n);
    t.check('a read answered as leader returns the acknowledged overwrite', stale.length === 0, { stale: stale.slice(0, 4), staleReads: stale.length, leaders });
    t.check('only the leader of the majority acts as leader', leaders.length === 1 && leaders[0] === second, { leaders, majorityLeader: second });

    t.heal();
    const leader = await agreedLeader(t, c, addrs, t.nodes, 30000);
    t.check('a leader exists after the heal', VOTERS.includes(leader), { leader });
    const w3 = await put(t, c, VOTERS, 'after', 'healed');
    t.check('a write after the heal is acknowledged', ok(w3), { error: why(w3) ?? null });
    for (const n of t.nodes) {
      await t.until(async () => (await local(c, n, 'after')) === 'healed', { timeoutMs: 20000, everyMs: 200, description: `${n} to apply the write after the heal` });
      const value = await local(c, n, 'config');
      t.check('every server holds the overwrite after the heal', value === 'v2', { node: n, value: value ?? null });
    }
    const r = await get(c, leader, 'config');
    t.check('the leader reads the overwrite', r.ok && r.value === 'v2', { leader, value: r.value ?? null, error: r.error ?? null });
  },
};
