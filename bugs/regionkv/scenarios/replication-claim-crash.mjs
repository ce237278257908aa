// replication-claim-crash — the server claiming a dead server's replication queue dies too.
import { connect, rowsAcross, unshippedEdits, waitForCluster, waitForPeer } from './lib/client.mjs';

export default {
  name: 'replication-claim-crash',
  description:
    'Rows are written and replicated to the peer. The region server hosting the first region then loses its ' +
    'link to the peer, takes more writes, and is killed before it can ship them. The first live server that ' +
    'starts taking over its replication queue is killed as well (its ZooKeeper replies are slowed so the kill ' +
    'lands mid-takeover). The last region server must end up serving every region, and every acknowledged ' +
    'write, before and after the crashes, must reach the peer cluster.',
  timeoutMs: 150000,
  async run(t) {
    const hc = await connect(t, 'client-repl');
    const { expected, first, victim } = await unshippedEdits(t, hc);

    const lockPath = `/hbase/replication/rs/${first.server}/lock`;
    // Generous: the claim starts within about three seconds (session expiry, then a claim round) but a loaded machine can stretch that.
    const locked = t.background(() => t.waitFor((e) => e.kind === 'log' && e.node === 'zk' && e.msg === 'znode created' && e.fields?.path === lockPath, {
      timeoutMs: 30000,
      description: "a live server to start claiming the dead server's replication queue",
    }));
    t.addLinkFault({ from: 'zk', to: '*', type: 'ZkCreateResp', delayMs: [1500, 1500] });
    t.note('killing region server', { victim });
    await t.kill(victim);
    const ev = await locked;
    const claimer = String(ev.fields.from);
    t.note('killing the claiming region server', { claimer });
    await t.kill(claimer);
    t.clearLinkFaults();

    const after = await waitForCluster(t, hc, { servers: 1 });
    t.check('the last region server serves every region', !after.timedOut, after);
    for (const row of rowsAcross('c', 10)) {
      const r = await hc.put(row, `x-${row}`);
      t.check('writes succeed after the crashes', r.ok === true, { row, reply: r });
      expected[row] = `x-${row}`;
    }
    const missing = await waitForPeer(t, expected, 20000);
    t.check('every acknowledged write reaches the peer cluster', missing.length === 0, { missing });
  },
};
