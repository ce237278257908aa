// replication-claim-live — two live servers race to claim a dead server's replication queues.
import { connect, rowsAcross, unshippedEdits, waitForCluster, waitForPeer } from './lib/client.mjs';

export default {
  name: 'replication-claim-live',
  description:
    'Rows are written and replicated to the peer. The region server hosting the first region loses its link to ' +
    'the peer, takes more writes, and is killed before it can ship them. Both surviving servers try to claim its ' +
    "replication queue while the first claimer's ZooKeeper writes are slow, so it is still copying the queue " +
    'when the other tries. The queue must be claimed by exactly one live server, every acknowledged write must ' +
    'reach the peer, and writes must keep succeeding.',
  timeoutMs: 150000,
  async run(t) {
    const hc = await connect(t, 'client-claim');
    const { expected, first, victim } = await unshippedEdits(t, hc);

    const lockPath = `/hbase/replication/rs/${first.server}/lock`;
    const locked = t.background(() => t.waitFor((e) => e.kind === 'log' && e.node === 'zk' && e.msg === 'znode created' && e.fields?.path === lockPath, {
      timeoutMs: 30000,
      description: "a live server to start claiming the dead server's replication queue",
    }));
    t.note('killing region server', { victim });
    await t.kill(victim);
    const claimer = String((await locked).fields.from);
    // The claimer stays alive but its ZooKeeper writes are slow: the other server tries to claim meanwhile.
    for (const type of ['ZkSet', 'ZkDelete']) t.addLinkFault({ from: claimer, to: 'zk', type, delayMs: [900, 900] });
    const claimed = (e) => e.kind === 'log' && e.msg === 'claimed queues of dead server' && e.fields?.server === first.server;
    await t.waitFor(claimed, { timeoutMs: 30000, description: "a live server to claim the dead server's replication queue", includePast: true });
    await t.sleep(6000);
    t.clearLinkFaults();
    const claimers = t.events().filter((e) => claimed(e) && e.fields.queues.length > 0).map((e) => e.node);
    t.check("the dead server's queue is claimed by exactly one live server", claimers.length === 1, { claimers });

    const after = await waitForCluster(t, hc, { servers: 2 });
    t.check('every region is served again', !after.timedOut, after);
    for (const row of rowsAcross('c', 10)) {
      const r = await hc.put(row, `x-${row}`);
      t.check('writes succeed after the crash', r.ok === true, { row, reply: r });
      expected[row] = `x-${row}`;
    }
    const missing = await waitForPeer(t, expected, 20000);
    t.check('every acknowledged write reaches the peer cluster', missing.length === 0, { missing });
  },
};
