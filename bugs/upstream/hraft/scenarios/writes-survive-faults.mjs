// writes-survive-faults — acknowledged writes through a leader crash, a voter's
// partition and the replica's restart.
import { addresses, agreedLeader, get, local, ok, put, why } from './lib/raftkv.mjs';

const VOTERS = ['n1', 'n2', 'n3'];
const REPLICA = 'n4';

export default {
  name: 'writes-survive-faults',
  description:
    'Three voters and a non-voting replica take writes. The leader is killed while the others take more and then ' +
    'restarted; a voter that is not leader is partitioned from everyone while the rest take more, and healed; the ' +
    'replica is killed and restarted. A leader must exist after each fault, every server (the replica too) must ' +
    'apply every acknowledged write, and the leader must read each one back.',
  timeoutMs: 180000,
  async run(t) {
    const c = await t.client('client-ops');
    const addrs = await addresses(t, c);
    const expected = {};
    const write = async (nodes, key, value) => {
      const r = await put(t, c, nodes, key, value);
      t.check('a write is acknowledged', ok(r), { key, error: why(r) ?? null });
      expected[key] = value;
    };

    const first = await agreedLeader(t, c, addrs);
    for (let i = 0; i < 5; i++) await write([first], `k${i}`, 'v1');

    await t.kill(first);
    const others = t.nodes.filter((n) => n !== first);
    const second = await agreedLeader(t, c, addrs, others, 30000);
    t.check('a voter takes over from the killed leader', VOTERS.includes(second), { killed: first, leader: second });
    for (let i = 0; i < 3; i++) await write([second], `k${i}`, 'v2');
    await t.restart(first);

    const third = await agreedLeader(t, c, addrs, t.nodes, 30000);
    const cut = VOTERS.find((n) => n !== third);
    t.partition([[cut], t.nodes.filter((n) => n !== cut)]);
    for (let i = 5; i < 8; i++) await write(VOTERS.filter((n) => n !== cut), `k${i}`, 'p');
    t.heal();

    await t.kill(REPLICA);
    await write(VOTERS, 'k8', 'replica-down');
    await t.restart(REPLICA);
    const leader = await agreedLeader(t, c, addrs, t.nodes, 30000);
    t.check('a leader exists after the faults', VOTERS.includes(leader), { leader, cut, killed: [first, REPLICA] });
    await write([leader], 'last', 'after');

    for (const n of t.nodes) {
      await t.until(async () => (await local(c, n, 'last')) === 'after', { timeoutMs: 20000, everyMs: 200, description: `${n} to apply the last write` });
      const wrong = {};
      for (const [k, v] of Object.entries(expected)) {
        const got = await local(c, n, k);
        if (got !== v) wrong[k] = got ?? null;
      }
      t.check('every server applies every acknowledged write', Object.keys(wrong).length === 0, { node: n, replica: n === REPLICA, wrong });
    }
    const wrong = {};
    for (const [k, v] of Object.entries(expected)) {
      const r = await get(c, leader, k);
      if (!r.ok || r.value !== v) wrong[k] = r.ok ? (r.value ?? null) : `error: ${r.error}`;
    }
    t.check('the leader reads back every acknowledged write', Object.keys(wrong).length === 0, { leader, wrong });
  },
};
