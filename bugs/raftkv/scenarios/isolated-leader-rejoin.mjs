// isolated-leader-rejoin — a leader is cut off, the rest move on, and it comes back as the leader dies.
import { brief, connect } from './lib/client.mjs';

export default {
  name: 'isolated-leader-rejoin',
  description:
    'n3 is made leader, then partitioned from n1 and n2 just as a client sends it a write (it cannot commit). ' +
    'n1 and n2 elect a leader and hand leadership back and forth a few times, while n3, cut off, must not raise ' +
    'its term. Then the current leader is killed and the partition heals at the same moment. The two live ' +
    'members must elect a leader and commit a write within a few seconds.',
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-0');
    const first = await kv.findLeader(15000);
    t.check('a leader is elected', first !== null);
    for (let i = 0; i < 5; i++) {
      const r = await kv.put(`k${i}`, `v${i}`);
      t.check('put is acknowledged', r.ok === true, { reply: r });
    }

    // Make n3 the leader (a stray election under load may take it away again: retry).
    let w = { ok: false };
    for (let attempt = 0; attempt < 4 && !w.ok; attempt++) {
      const current = await kv.findLeader(10000);
      t.check('a leader is elected', current !== null);
      if (current.id !== 'n3') {
        const n3Leads = t.waitFor((e) => e.kind === 'log' && e.node === 'n3' && e.msg === 'became leader', {
          timeoutMs: 10000,
          description: 'n3 to become leader',
        }).catch(() => null);
        const tr = await kv.send(current.id, 'TransferLeader', { target: 'n3' });
        if (!tr.ok) continue;
        await n3Leads;
      }
      w = await kv.send('n3', 'Put', { key: 'on-n3', value: 'x' }, 3000);
    }
    t.check('n3 leads and commits a write', w.ok === true, { w });
    await t.sleep(300);

    const stepDown = t.waitFor((e) => e.kind === 'log' && e.node === 'n3' && e.msg === 'became follower', {
      timeoutMs: 15000,
      description: 'the isolated n3 to step down',
    }).catch(() => null);
    const n3AtPartition = await t.state('n3');
    t.partition([['n3'], ['n1', 'n2']]);
    const stray = await kv.send('n3', 'Put', { key: 'stray', value: 'never-committed' }, 500);
    t.note('write sent to the isolated leader', { reply: stray });
    await stepDown;
    let leader = await kv.findLeader(15000, ['n1', 'n2']);
    t.check('n1 and n2 elect a leader', leader !== null);
    for (let i = 0; i < 3; i++) {
      const other = leader.id === 'n1' ? 'n2' : 'n1';
      const moved = t.waitFor((e) => e.kind === 'log' && e.node === other && e.msg === 'became leader', {
        timeoutMs: 10000,
        description: `leadership to move to ${other}`,
      }).catch(() => null);
      const tr = await kv.send(leader.id, 'TransferLeader', { target: other });
      if (tr.ok) await moved;
      leader = await kv.findLeader(5000, ['n1', 'n2']);
      t.check('a leader among n1 and n2', leader !== null);
    }
    // Long enough for the cut-off n3 to time out and campaign at least once more.
    await t.sleep(2500);
    const states = await Promise.all(t.nodes.map((n) => t.state(n).catch(() => null)));
    t.note('before the heal', { states: states.map(brief) });
    const n3Cut = states[t.nodes.indexOf('n3')];
    t.check('the cut-off member did not raise its term (PreVote)', n3Cut !== null && n3Cut.term === n3AtPartition.term, {
      atPartition: brief(n3AtPartition),
      beforeHeal: brief(n3Cut),
    });

    await t.kill(leader.id);
    t.heal();
    const survivors = t.nodes.filter((n) => n !== leader.id);
    t.note('killed the leader and healed the partition', { killed: leader.id, survivors });

    const elected = await kv.findLeader(15000, survivors);
    const after = await Promise.all(survivors.map((n) => t.state(n).catch(() => null)));
    t.check('the live members elect a leader', elected !== null, { states: after.map(brief) });
    const r = await kv.put('after-heal', 'y', {});
    t.check('a write commits after the heal', r.ok === true, { reply: r });
  },
};
