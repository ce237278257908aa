// lock-release-link-errors — a lock holder's session closes while one follower keeps losing the leader's proposals.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'lock-release-link-errors',
  description:
    'Clients hold locks as ephemeral znodes under /locks, each owned by its session. The leader\'s proposals to one ' +
    'follower start getting lost on the wire, so that follower keeps dropping out and re-syncing; meanwhile a holder ' +
    'closes its session, which releases its lock, and the close is acknowledged. Once the link is healthy and every ' +
    'server serves again, the released lock must be gone on every server; another client takes the same lock and ' +
    'releases it the same way, and it must be gone again everywhere; all servers must end with the same tree.',
  timeoutMs: 150000,
  async run(t) {
    const zk = await connect(t, 'client-locks');
    const first = await zk.findLeader(30000);
    t.check('a leader is elected', first !== null);
    t.check('every server is serving', (await zk.waitServing(t.nodes, 30000)) !== null);
    for (const [path, data] of [['/locks', ''], ['/config', 'c0']]) {
      const r = await zk.create(path, data);
      t.check('create is acknowledged', r.ok === true, { path, reply: r });
    }
    t.check('setData is acknowledged', (await zk.setData('/config', 'c1')).ok === true);
    const lock = async (path, holder) => {
      const s = await zk.openSession();
      t.check('a session opens', s.ok === true, { holder, s });
      const r = await zk.createEphemeral(path, holder, s.session);
      t.check('the lock is taken', r.ok === true, { path, holder, reply: r });
      return s.session;
    };
    const holderA = await lock('/locks/job-1', 'holder-a');
    const holderB = await lock('/locks/job-2', 'holder-b');
    await converge(t, zk);
    const leader = await zk.findLeader(30000);
    t.check('a leader is serving', leader !== null);
    const L = leader.id;
    const F = t.nodes.find((n) => n !== L);

    const resync = t.waitFor((e) => e.kind === 'log' && e.node === F && e.msg === 'sync mode', { timeoutMs: 20000, description: 'the follower to re-sync with the leader' });
    t.addLinkFault({ from: L, to: F, type: 'PROPOSAL', drop: 1 });
    t.note('proposals from the leader to one follower are lost', { leader: L, follower: F });
    const release = await zk.closeSession(holderA, { node: L });
    t.check('the lock holder closes its session', release.ok === true, { release });
    await resync;
    await t.sleep(1000);
    t.clearLinkFaults();
    t.note('the link is healthy again', {});

    t.check('every server serves again', (await zk.waitServing(t.nodes, 30000)) !== null, { status: await zk.statusAll() });
    for (const node of t.nodes) {
      const gone = await zk.read(node, '/locks/job-1');
      t.check('the released lock is gone on every server', gone?.ok === true && gone.found === false, { node, gone });
    }
    const holderC = await lock('/locks/job-1', 'holder-c');
    t.check('the lock is released again', (await zk.closeSession(holderC)).ok === true);
    for (const node of t.nodes) {
      const gone = await zk.read(node, '/locks/job-1');
      t.check('the lock released a second time is gone on every server', gone?.ok === true && gone.found === false, { node, gone });
    }
    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    t.check('all servers hold the same tree', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
    for (const s of states) t.check('only the lock still held is left', JSON.stringify(s.ephemerals) === JSON.stringify({ '/locks/job-2': holderB }), { node: s.id, ephemerals: s.ephemerals });
  },
};
