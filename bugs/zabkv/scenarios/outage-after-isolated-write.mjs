// outage-after-isolated-write — a write reaches only the leader, then the whole ensemble goes down.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'outage-after-isolated-write',
  description:
    'The leader is cut off from both followers just as a client sends it a create, which cannot commit. ' +
    'Then every server is killed (a power cut) and the partition is gone. The two former followers come back ' +
    'first, elect a leader and take writes; then the former leader comes back and rejoins. Every server must ' +
    'answer reads the same way and hold the same tree, and writes must go on.',
  timeoutMs: 150000,
  async run(t) {
    const zk = await connect(t, 'client-0');
    const first = await zk.findLeader(30000);
    t.check('a leader is elected', first !== null);
    await zk.waitServing(t.nodes, 30000);
    for (let i = 0; i < 5; i++) {
      const r = await zk.create(`/a${i}`, `v${i}`);
      t.check('create is acknowledged', r.ok === true, { reply: r });
    }
    const A = first.id;
    const others = t.nodes.filter((n) => n !== A);

    t.partition([[A], others]);
    const logged = t.waitFor((e) => e.kind === 'log' && e.node === A && e.msg === 'proposed' && e.fields?.path === '/stray', {
      timeoutMs: 10000,
      description: 'the cut-off leader to log the create',
      includePast: true,
    });
    const stray = await zk.send(A, 'Create', { path: '/stray', data: 'only-on-the-old-leader' }, 200);
    await logged;
    t.note('create sent to the cut-off leader', { leader: A, reply: stray });
    await Promise.all(t.nodes.map((n) => t.kill(n)));
    t.heal();
    t.note('every server killed; partition healed', {});

    await Promise.all(others.map((n) => t.restart(n)));
    const second = await zk.findLeader(30000, others);
    t.check('the two former followers elect a leader', second !== null);
    for (let i = 0; i < 5; i++) {
      const r = await zk.create(`/b${i}`, `v${i}`);
      t.check('create is acknowledged', r.ok === true, { reply: r });
    }

    await t.restart(A);
    const all = await zk.waitServing(t.nodes, 30000);
    t.check('the former leader rejoins and serves', all !== null, { status: await zk.statusAll() });
    const after = await zk.create('/c0', 'v0');
    t.check('a write after the rejoin is acknowledged', after.ok === true, { after });

    const answers = {};
    for (const node of t.nodes) {
      const r = await zk.read(node, '/stray');
      answers[node] = r.ok ? (r.found ? r.data : 'NONODE') : `error: ${r.error}`;
      const c = await zk.read(node, '/c0');
      t.check('every server reads the write made after the rejoin', c.ok === true && c.data === 'v0', { node, c });
    }
    t.note('answers for /stray', answers);
    t.check('every server answers a read of /stray the same way', new Set(Object.values(answers)).size === 1, { answers });
    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    t.check('all servers hold the same tree', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
  },
};
