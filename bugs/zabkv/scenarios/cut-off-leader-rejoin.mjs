// cut-off-leader-rejoin — a leader cut off with a write in hand rejoins over a flaky network, then restarts.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'cut-off-leader-rejoin',
  description:
    'The leader is cut off from both followers just as a client sends it a create, which cannot commit. The two ' +
    'followers elect a leader and take writes. The partition heals, but while the former leader is catching up ' +
    'its link drops again before the new leader has finished with it; the link comes back, the former leader ' +
    'rejoins, more writes are made, and then it is restarted. Every server must hold every acknowledged znode ' +
    'and the same tree, and writes must go on.',
  timeoutMs: 150000,
  async run(t) {
    const zk = await connect(t, 'client-rejoin');
    const first = await zk.findLeader(30000);
    t.check('a leader is elected', first !== null);
    await zk.waitServing(t.nodes, 30000);
    const acked = {};
    const create = async (path, data) => {
      const r = await zk.create(path, data);
      t.check('create is acknowledged', r.ok === true, { path, reply: r });
      acked[path] = data;
    };
    for (let i = 0; i < 4; i++) await create(`/a${i}`, `v${i}`);
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

    const second = await zk.findLeader(30000, others);
    t.check('the two followers elect a leader', second !== null);
    const L = second.id;
    for (let i = 0; i < 5; i++) await create(`/b${i}`, `w${i}`);

    // The link flaps while the former leader is being brought up to date.
    t.addLinkFault({ from: L, to: A, type: 'NEWLEADER', drop: 1 });
    const synced = t.waitFor((e) => e.kind === 'log' && e.node === A && e.msg === 'sync mode', { timeoutMs: 30000, description: 'the former leader to be synced' });
    t.heal();
    const mode = await synced;
    await t.sleep(300);
    t.partition([[A], others]);
    t.note('link to the former leader dropped again while it was catching up', { former: A, leader: L, sync: mode.fields });
    await t.waitFor((e) => e.kind === 'log' && e.node === A && e.msg === 'LOOKING', { timeoutMs: 30000, description: 'the former leader to give up on the new leader' });
    t.clearLinkFaults();
    t.heal();

    const all = await zk.waitServing(t.nodes, 30000);
    t.check('the former leader rejoins and serves', all !== null, { status: await zk.statusAll() });
    for (let i = 0; i < 2; i++) await create(`/c${i}`, `x${i}`);

    await t.kill(A);
    await t.restart(A);
    t.note('former leader restarted', { node: A });
    t.check('every server serves after the restart', (await zk.waitServing(t.nodes, 30000)) !== null, { status: await zk.statusAll() });
    const seen = await zk.read(A, '/b0');
    t.note('read of /b0 on the restarted server', { node: A, seen });
    t.check('a znode created while the server was cut off is readable on it', seen.ok === true && seen.found === true && seen.data === 'w0', { node: A, seen });

    await create('/after', 'y');
    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    for (const s of states) {
      const missing = Object.entries(acked).filter(([p, v]) => s.tree?.[p] !== v).map(([p]) => p);
      t.check('every server holds every acknowledged znode', missing.length === 0, { node: s.id, missing, count: missing.length });
    }
    t.check('all servers hold the same tree', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
  },
};
