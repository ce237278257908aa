// leader-holds-with-one-voter-down — a leader that still reaches a majority of the
// voters keeps leading and serving.
import { addresses, agreedLeader, get, local, ok, put, status, why } from './lib/raftkv.mjs';

const VOTERS = ['n1', 'n2', 'n3'];
const REPLICA = 'n4';

export default {
  name: 'leader-holds-with-one-voter-down',
  description:
    'Three voters and a non-voting replica agree on a leader. One voter that is not leader is killed and the replica ' +
    'is cut off from everyone. For five seconds the leader takes a write and a read every quarter second: it must ' +
    'acknowledge every write, read each back, and stay leader in the same term. The voter restarts, the replica is ' +
    'healed, and every server must hold the last write.',
  timeoutMs: 120000,
  async run(t) {
    const c = await t.client('client-ops');
    const addrs = await addresses(t, c);
    const leader = await agreedLeader(t, c, addrs);
    const before = await status(c, addrs, leader);
    const down = VOTERS.find((n) => n !== leader);
    await t.kill(down);
    t.partition([[REPLICA], t.nodes.filter((n) => n !== REPLICA)]);

    const failures = [];
    let i = 0;
    const d = t.deadline(5000);
    while (!d.expired) {
      const key = `k${i++}`;
      const w = await put(t, c, [leader], key, 'v', 3000);
      const r = ok(w) ? await get(c, leader, key) : undefined;
      if (!ok(w) || !r?.ok || r.value !== 'v') failures.push({ key, write: why(w) ?? 'ok', read: r === undefined ? null : (r.error ?? r.value ?? null) });
      await t.sleep(250);
    }
    const after = await status(c, addrs, leader);
    t.check('the leader acknowledges and reads back every write while one voter is down', failures.length === 0, { leader, down, writes: i, failures: failures.slice(0, 4), failed: failures.length });
    t.check('the leader stays leader in the same term', after?.state === 'Leader' && after?.term === before?.term, { leader, before: before ?? null, after: after ?? null });

    await t.restart(down);
    t.heal();
    await agreedLeader(t, c, addrs, t.nodes, 30000);
    const last = await put(t, c, VOTERS, 'last', 'after');
    t.check('a write after the recovery is acknowledged', ok(last), { error: why(last) ?? null });
    for (const n of t.nodes) {
      await t.until(async () => (await local(c, n, 'last')) === 'after', { timeoutMs: 20000, everyMs: 200, description: `${n} to apply the last write` });
    }
  },
};
