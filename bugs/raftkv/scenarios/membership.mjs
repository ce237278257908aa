// membership — adding and removing members while the cluster takes writes.
import { brief, connect, converge, serving } from './lib/client.mjs';

export default {
  name: 'membership',
  description:
    'A cluster bootstrapped with two members (n1, n2) takes writes; n3 is added and catches up, and counts in the ' +
    'quorum: with the other old member killed, writes still succeed. After that member restarts, a follower is ' +
    'removed: it stops serving, cannot be added back, and the rest keep taking writes. Every member of the final ' +
    'cluster holds every acknowledged write.',
  timeoutMs: 150000,
  config: { initialCluster: ['n1', 'n2'] },
  async run(t) {
    const kv = await connect(t, 'client-members');
    const first = await kv.findLeader(15000, ['n1', 'n2']);
    t.check('the two bootstrap members elect a leader', first !== null);
    const expected = {};
    const write = async (prefix, n) => {
      for (let i = 0; i < n; i++) {
        const r = await kv.put(`${prefix}/${i}`, `v${i}`);
        t.check('put is acknowledged', r.ok === true, { key: `${prefix}/${i}`, reply: r });
        expected[`${prefix}/${i}`] = `v${i}`;
      }
    };
    const holdsAll = (states) => {
      for (const s of states) {
        const missing = Object.entries(expected).filter(([k, v]) => s.kv?.[k] !== v).map(([k]) => k);
        t.check('every acknowledged write is on every member', missing.length === 0, { node: s.id, missing });
      }
      t.check('the members hold the same data', new Set(states.map((s) => s.kvHash)).size === 1, { states: states.map(brief) });
    };
    await write('two', 10);

    const added = await kv.request('MemberAdd', { id: 'n3' });
    t.check('adding n3 is acknowledged', added.ok === true && added.members.includes('n3') && added.members.length === 3, { added });
    const again = await kv.request('MemberAdd', { id: 'n3' });
    t.check('adding an existing member is refused', again.ok === false && again.error === 'member exists', { again });
    await write('three', 10);
    holdsAll(await converge(t, kv, 20000));

    // n3 must count in the quorum: with the other old member down, the leader and n3 commit.
    const leader = await kv.findLeader(10000);
    const old = ['n1', 'n2'].find((n) => n !== leader.id);
    await t.kill(old);
    await write('without-' + old, 10);
    await t.restart(old);
    await t.waitFor((e) => e.kind === 'log' && e.node === old && e.msg === 'raft started', { timeoutMs: 15000, description: `${old} to restart`, includePast: true });
    await write('restarted', 5);
    holdsAll(await converge(t, kv, 20000));

    const lead = await kv.findLeader(10000);
    const gone = t.nodes.find((n) => n !== lead.id);
    const removed = await kv.request('MemberRemove', { id: gone });
    t.check('removing a follower is acknowledged', removed.ok === true && !removed.members.includes(gone) && removed.members.length === 2, { removed });
    await t.until(async () => !(await serving(t, kv)).includes(gone), { timeoutMs: 15000, everyMs: 200, description: 'the removed member to stop' });
    const back = await kv.request('MemberAdd', { id: gone });
    t.check('a removed member cannot be added back', back.ok === false && back.error === 'member removed', { back });
    await write('after-remove', 10);
    const rest = t.nodes.filter((n) => n !== gone);
    const final = await converge(t, kv, 20000, rest);
    t.check('both remaining members report the same member list', final.length === 2 && final.every((s) => JSON.stringify(s.members) === JSON.stringify(rest)), { states: final.map(brief) });
    holdsAll(final);
  },
};
