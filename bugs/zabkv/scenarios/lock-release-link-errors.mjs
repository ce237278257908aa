// lock-release-link-errors — a lock holder releases its lock while one follower keeps losing the leader's proposals.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'lock-release-link-errors',
  description:
    'Clients hold locks as znodes under /locks. The leader\'s proposals to one follower start getting lost on the wire, ' +
    'so that follower keeps dropping out and re-syncing; meanwhile a holder releases its lock (deletes its znode) and ' +
    'the delete is acknowledged. Once the link is healthy and every server serves again, the released lock must be ' +
    'gone on every server, a new lock can be taken, and all servers must hold the same tree.',
  timeoutMs: 150000,
  async run(t) {
    const zk = await connect(t, 'client-locks');
    const first = await zk.findLeader(30000);
    t.check('a leader is elected', first !== null);
    t.check('every server is serving', (await zk.waitServing(t.nodes, 30000)) !== null);
    for (const [path, data] of [['/locks', ''], ['/locks/job-1', 'holder-a'], ['/locks/job-2', 'holder-b'], ['/config', 'c0']]) {
      const r = await zk.create(path, data);
      t.check('create is acknowledged', r.ok === true, { path, reply: r });
    }
    const set = await zk.setData('/config', 'c1');
    t.check('setData is acknowledged', set.ok === true, { set });
    await converge(t, zk);
    const leader = await zk.findLeader(30000);
    t.check('a leader is serving', leader !== null);
    const L = leader.id;
    const F = t.nodes.find((n) => n !== L);

    const resync = t.waitFor((e) => e.kind === 'log' && e.node === F && e.msg === 'sync mode', { timeoutMs: 20000, description: 'the follower to re-sync with the leader' });
    t.addLinkFault({ from: L, to: F, type: 'PROPOSAL', drop: 1 });
    t.note('proposals from the leader to one follower are lost', { leader: L, follower: F });
    const release = await zk.write('Delete', { path: '/locks/job-1', version: -1 }, { node: L });
    t.check('the lock release is acknowledged', release.ok === true, { release });
    await resync;
    await t.sleep(1000);
    t.clearLinkFaults();
    t.note('the link is healthy again', {});

    t.check('every server serves again', (await zk.waitServing(t.nodes, 30000)) !== null, { status: await zk.statusAll() });
    const take = await zk.create('/locks/job-3', 'holder-c');
    t.check('a new lock is taken', take.ok === true, { take });
    for (const node of t.nodes) {
      const gone = await zk.read(node, '/locks/job-1');
      t.check('the released lock is gone on every server', gone?.ok === true && gone.found === false, { node, gone });
      const held = await zk.read(node, '/locks/job-3');
      t.check('the new lock is on every server', held?.ok === true && held.found === true && held.data === 'holder-c', { node, held });
    }
    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    t.check('all servers hold the same tree', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
  },
};
