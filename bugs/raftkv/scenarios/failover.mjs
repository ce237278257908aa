// failover — losing the leader, electing another, and the old one catching up.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'failover',
  description:
    'Writes through the leader, then the leader is killed: the other two elect a new leader, every ' +
    'acknowledged write is still readable and new writes succeed; the old leader is restarted and catches up ' +
    'to the same data as the others.',
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-failover');
    const first = await kv.findLeader(15000);
    t.check('a leader is elected', first !== null);
    const expected = {};
    for (let i = 0; i < 30; i++) {
      const r = await kv.put(`before/${i}`, `v${i}`);
      t.check('put is acknowledged', r.ok === true, { key: `before/${i}`, reply: r });
      expected[`before/${i}`] = `v${i}`;
    }
    const settled = await converge(t, kv);
    t.check('members agree before the failure', new Set(settled.map((s) => s.kvHash)).size === 1, { states: settled.map(brief) });
    await t.sleep(500);

    const old = (await kv.findLeader(5000)).id;
    const elected = t.background(() => t.waitFor((e) => e.kind === 'log' && e.msg === 'became leader' && e.node !== old, {
      timeoutMs: 15000,
      description: 'a new leader after the old one is killed',
    }));
    await t.kill(old);
    const ev = await elected;
    t.note('new leader', { leader: ev.node, term: ev.fields?.term ?? null });

    for (const [k, v] of Object.entries(expected)) {
      const r = await kv.get(k);
      t.check('acknowledged writes survive the failover', r.ok === true && r.value === v, { key: k, reply: r });
    }
    for (let i = 0; i < 20; i++) {
      const r = await kv.put(`after/${i}`, `v${i}`);
      t.check('writes succeed under the new leader', r.ok === true, { key: `after/${i}`, reply: r });
      expected[`after/${i}`] = `v${i}`;
    }

    await t.restart(old);
    await t.waitFor((e) => e.kind === 'log' && e.node === old && e.msg === 'raft started', {
      timeoutMs: 15000,
      description: 'the old leader to restart',
      includePast: true,
    });
    for (let i = 0; i < 10; i++) {
      const r = await kv.put(`restarted/${i}`, `v${i}`);
      t.check('writes succeed after the restart', r.ok === true, { key: `restarted/${i}`, reply: r });
      expected[`restarted/${i}`] = `v${i}`;
    }
    const states = await converge(t, kv, 20000);
    t.check('the restarted member caught up', states.length === 3 && new Set(states.map((s) => s.appliedIndex)).size === 1, { states: states.map(brief) });
    t.check('all members hold the same data', new Set(states.map((s) => s.kvHash)).size === 1, { states: states.map(brief) });
    for (const s of states) {
      const missing = Object.entries(expected).filter(([k, v]) => s.kv?.[k] !== v).map(([k]) => k);
      t.check('every acknowledged write is on every member', missing.length === 0, { node: s.id, missing });
    }
  },
};
