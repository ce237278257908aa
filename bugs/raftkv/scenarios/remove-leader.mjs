// remove-leader — shrinking the cluster to one member by removing the leader last.
import { brief, connect, converge, serving } from './lib/client.mjs';

export default {
  name: 'remove-leader',
  description:
    'Three members take writes; a follower is removed, leaving two members, and more writes follow; then the ' +
    'leader is removed. The removal must be acknowledged, the remaining member must take over as leader, every ' +
    'acknowledged write must be readable from it, new writes must succeed, and the removed members must stop serving.',
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-ops');
    const first = await kv.findLeader(15000);
    t.check('a leader is elected', first !== null);
    const expected = {};
    const write = async (prefix, n) => {
      for (let i = 0; i < n; i++) {
        const r = await kv.put(`${prefix}/${i}`, `v${i}`);
        t.check('put is acknowledged', r.ok === true, { key: `${prefix}/${i}`, reply: r });
        expected[`${prefix}/${i}`] = `v${i}`;
      }
    };
    await write('three', 10);

    const follower = t.nodes.find((n) => n !== first.id);
    const r1 = await kv.request('MemberRemove', { id: follower });
    t.check('removing a follower is acknowledged', r1.ok === true && !r1.members.includes(follower), { reply: r1 });
    await t.until(async () => !(await serving(t, kv)).includes(follower), { timeoutMs: 15000, everyMs: 200, description: 'the removed follower to stop' });
    await write('two', 10);

    const leader = await kv.findLeader(10000);
    t.check('the two members have a leader', leader !== null);
    const survivor = t.nodes.find((n) => n !== follower && n !== leader.id);
    const r2 = await kv.request('MemberRemove', { id: leader.id });
    t.check('removing the leader is acknowledged', r2.ok === true && r2.members.length === 1 && r2.members[0] === survivor, { reply: r2 });

    const next = await kv.findLeader(15000, [survivor]);
    t.check('the remaining member takes over as leader', next !== null, { survivor });
    if (!next) return;
    await write('one', 10);
    const list = await kv.request('MemberList', {});
    t.check('the member list holds only the remaining member', list.ok === true && list.members.length === 1 && list.members[0] === survivor, { list });

    await t.until(async () => !(await serving(t, kv)).includes(leader.id), { timeoutMs: 15000, everyMs: 200, description: 'the removed leader to stop' });
    const [s] = await converge(t, kv, 15000, [survivor]);
    const missing = Object.entries(expected).filter(([k, v]) => s?.kv?.[k] !== v).map(([k]) => k);
    t.check('every acknowledged write is on the remaining member', s !== undefined && missing.length === 0, { state: brief(s), missing });
  },
};
