// outage-recovery-slow-link — the ensemble recovers from an outage over a slow link, then loses power again.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'outage-recovery-slow-link',
  description:
    'A client sends the leader a create that reaches only the leader\'s log, and every server dies. The former leader ' +
    'and one former follower come back and elect a leader (the leader\'s UPTODATE to that follower is held up 5 s on a slow link), ' +
    'and a client reads the znode. Then both die again and the other two servers come back. ' +
    'The znode the client read must still be there, writes must go on, and after the last server rejoins ' +
    'every server must hold the same tree.',
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
    const current = await zk.findLeader(30000);
    t.check('a leader is serving', current !== null);
    const L = current.id;
    const [A, B] = t.nodes.filter((n) => n !== L);

    // The followers never see the next proposal: it reaches only the leader's log before everyone dies.
    t.addLinkFault({ from: L, to: A, type: 'PROPOSAL', drop: 1 });
    t.addLinkFault({ from: L, to: B, type: 'PROPOSAL', drop: 1 });
    const logged = t.waitFor((e) => e.kind === 'log' && e.node === L && e.msg === 'proposed' && e.fields?.path === '/late', {
      timeoutMs: 10000,
      description: 'the leader to log the create',
      includePast: true,
    });
    const late = await zk.send(L, 'Create', { path: '/late', data: 'written-last' }, 200);
    await logged;
    t.note('create sent to the leader just before the power cut', { leader: L, reply: late });
    await Promise.all(t.nodes.map((n) => t.kill(n)));
    t.clearLinkFaults();
    t.note('every server is down', {});

    t.addLinkFault({ from: L, to: B, type: 'UPTODATE', delayMs: [5000, 5000] });
    await Promise.all([t.restart(L), t.restart(B)]);
    const second = await zk.findLeader(30000, [L, B]);
    t.check('the two restarted servers elect a leader', second !== null);
    const seen = await zk.read(second.id, '/late');
    t.note('read of /late after the first recovery', { node: second.id, seen });
    t.check('the create sent before the outage is readable', seen.ok === true && seen.found === true && seen.data === 'written-last', { seen });

    await Promise.all([t.kill(L), t.kill(B)]);
    t.clearLinkFaults();
    t.note('both servers killed again', {});
    await Promise.all([t.restart(A), t.restart(B)]);
    const third = await zk.findLeader(30000, [A, B]);
    t.check('the other two servers elect a leader', third !== null);
    const again = await zk.read(third.id, '/late');
    t.check('a znode a client has read is still there after the next recovery', again.ok === true && again.found === true && again.data === 'written-last', { node: third.id, again });
    const after = await zk.create('/after', 'x');
    t.check('a write after the second recovery is acknowledged', after.ok === true, { after });

    await t.restart(L);
    const all = await zk.waitServing(t.nodes, 30000);
    t.check('every server serves again', all !== null, { status: await zk.statusAll() });
    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    t.check('all servers hold the same tree', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
    for (const s of states) t.check('every server has /late and /after', s.tree?.['/late'] === 'written-last' && s.tree?.['/after'] === 'x', { node: s.id });
  },
};
