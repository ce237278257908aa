// sessions — ephemeral znodes live as long as their session, across a leader failover and a restart.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'sessions',
  description:
    'Two clients open sessions (one through a follower, one through the leader) and register ephemeral znodes ' +
    'under /workers. The leader is killed: the ephemerals survive the failover on every server. One session is ' +
    'closed and its ephemeral must be gone everywhere while the other stays; the old leader is restarted and must ' +
    'agree; then the second session is closed, and every server must end with the same tree and no ephemerals.',
  timeoutMs: 150000,
  async run(t) {
    const zk = await connect(t, 'client-sessions');
    const first = await zk.findLeader(30000);
    t.check('a leader is elected', first !== null);
    t.check('every server is serving', (await zk.waitServing(t.nodes, 30000)) !== null);
    const follower = t.nodes.find((n) => n !== first.id);
    t.check('a persistent parent is created', (await zk.create('/workers', '')).ok === true);

    const s1 = await zk.openSession({ node: follower });
    t.check('a session opens through a follower', s1.ok === true && typeof s1.session === 'string', { s1 });
    const s2 = await zk.openSession();
    t.check('a session opens through the leader', s2.ok === true && typeof s2.session === 'string' && s2.session !== s1.session, { s2 });
    const w1 = await zk.createEphemeral('/workers/w1', 'one', s1.session, { node: follower });
    t.check('an ephemeral is created through a follower', w1.ok === true, { w1 });
    const w2 = await zk.createEphemeral('/workers/w2', 'two', s2.session);
    t.check('an ephemeral is created through the leader', w2.ok === true, { w2 });
    const child = await zk.send(first.id, 'Create', { path: '/workers/w1/x', data: '' });
    t.check('an ephemeral has no children', child.ok === false && child.error === 'NOCHILDRENFOREPHEMERALS', { child });
    const stray = await zk.send(first.id, 'Create', { path: '/workers/w9', data: '', ephemeral: true, session: 'no-such-session' });
    t.check('an ephemeral needs an open session', stray.ok === false && stray.error === 'SESSIONEXPIRED', { stray });

    await t.kill(first.id);
    t.note('killed the leader', { leader: first.id });
    const rest = t.nodes.filter((n) => n !== first.id);
    const second = await zk.findLeader(30000, rest);
    t.check('the others elect a new leader', second !== null);
    t.check('the others serve', (await zk.waitServing(rest, 30000)) !== null, { status: await zk.statusAll(rest) });
    for (const node of rest) {
      const r = await zk.read(node, '/workers/w1');
      t.check('an ephemeral survives the failover', r?.ok === true && r.found === true && r.stat?.ephemeralOwner === s1.session, { node, r });
    }

    const closed = await zk.closeSession(s1.session);
    t.check('closing a session is acknowledged', closed.ok === true, { closed });
    for (const node of rest) {
      const gone = await zk.read(node, '/workers/w1');
      t.check("a closed session's ephemeral is gone", gone?.ok === true && gone.found === false, { node, gone });
      const kept = await zk.read(node, '/workers/w2');
      t.check("an open session's ephemeral stays", kept?.ok === true && kept.found === true, { node, kept });
    }
    const late = await zk.createEphemeral('/workers/w3', 'late', s1.session, { node: rest.find((n) => n !== second.id) });
    t.check('a closed session cannot create an ephemeral', late.ok === false && late.error === 'SESSIONEXPIRED', { late });
    const again = await zk.closeSession(s1.session);
    t.check('a closed session cannot be closed again', again.ok === false && again.error === 'SESSIONEXPIRED', { again });

    await t.restart(first.id);
    t.check('every server serves again', (await zk.waitServing(t.nodes, 30000)) !== null, { status: await zk.statusAll() });
    const gone = await zk.read(first.id, '/workers/w1');
    t.check("the restarted server agrees the closed session's ephemeral is gone", gone?.ok === true && gone.found === false, { gone });
    const last = await zk.closeSession(s2.session);
    t.check('closing the second session is acknowledged', last.ok === true, { last });

    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    t.check('all servers hold the same tree', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
    for (const s of states) {
      t.check('no session and no ephemeral is left', s.sessions?.length === 0 && Object.keys(s.ephemerals ?? {}).length === 0 && s.tree?.['/workers'] === '', { node: s.id });
    }
  },
};
