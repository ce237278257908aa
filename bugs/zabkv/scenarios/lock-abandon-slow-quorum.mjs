// lock-abandon-slow-quorum — a worker closes its session while its lock request is still on its way, with slow acks.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'lock-abandon-slow-quorum',
  description:
    'A worker opens a session and asks for a lock (an ephemeral znode under /locks) through one follower while it ' +
    'closes the same session through the leader, at a time when the followers acknowledge proposals slowly. Once ' +
    'the close is acknowledged, no server may hold a znode owned by the closed session; another worker must be able ' +
    'to take the lock and release it; all servers must end with the same tree and no ephemerals.',
  timeoutMs: 120000,
  async run(t) {
    const zk = await connect(t, 'client-workers');
    const first = await zk.findLeader(30000);
    t.check('a leader is elected', first !== null);
    t.check('every server is serving', (await zk.waitServing(t.nodes, 30000)) !== null);
    t.check('a persistent parent is created', (await zk.create('/locks', '')).ok === true);
    const leader = await zk.findLeader(30000);
    t.check('a leader is serving', leader !== null);
    const L = leader.id;
    const followers = t.nodes.filter((n) => n !== L);
    const [F] = followers;
    const worker = await zk.openSession({ node: F });
    t.check('the worker opens a session', worker.ok === true, { worker });
    await converge(t, zk);

    for (const f of followers) t.addLinkFault({ from: f, to: L, type: 'ACK', delayMs: [800, 800] });
    t.note('the followers acknowledge proposals slowly', { leader: L });
    const closing = zk.closeSession(worker.session, { node: L });
    await t.sleep(100);
    const late = zk.createEphemeral('/locks/job-1', 'worker', worker.session, { node: F });
    const [closed, taken] = await Promise.all([closing, late]);
    t.check('closing the session is acknowledged', closed.ok === true, { closed });
    t.note('the lock request ended', { taken });
    t.clearLinkFaults();
    t.note('acknowledgements are fast again', {});

    for (const node of t.nodes) {
      const r = await zk.read(node, '/locks/job-1');
      t.check('no server holds a znode of the closed session', r?.ok === true && (r.found === false || r.stat?.ephemeralOwner !== worker.session), { node, r });
    }
    const next = await zk.openSession();
    t.check('another worker opens a session', next.ok === true, { next });
    const lock = await zk.createEphemeral('/locks/job-1', 'next', next.session);
    t.check('another worker takes the lock', lock.ok === true, { lock });
    t.check('it releases the lock', (await zk.closeSession(next.session)).ok === true);

    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    t.check('all servers hold the same tree', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
    for (const s of states) {
      t.check('no session and no ephemeral is left', s.sessions?.length === 0 && Object.keys(s.ephemerals ?? {}).length === 0, { node: s.id, sessions: s.sessions, ephemerals: s.ephemerals });
    }
  },
};
