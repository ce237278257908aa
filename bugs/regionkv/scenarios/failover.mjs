// failover — a region server dies, then the active master dies.
import { connect, hostOf, onlineRegions, rowsAcross, waitForCluster, waitForPeer } from './lib/client.mjs';

export default {
  name: 'failover',
  description:
    'Rows are written to every region; the region server hosting the middle region is killed: the master ' +
    'splits its WAL, reassigns its regions, and every acknowledged row is still readable. Then the active ' +
    'master is killed: the backup takes over, the regions stay where they are, writes continue, and every ' +
    'write reaches the peer cluster.',
  timeoutMs: 150000,
  async run(t) {
    const hc = await connect(t, 'client-failover');
    const up = await waitForCluster(t, hc);
    t.check('the cluster comes up with every region assigned', !up.timedOut, up);
    const expected = {};
    for (const row of rowsAcross('a', 30)) {
      const r = await hc.put(row, `v-${row}`);
      t.check('put is acknowledged', r.ok === true, { row, reply: r });
      expected[row] = `v-${row}`;
    }

    const victim = hostOf((await hc.regionOf('g')).server);
    t.note('killing region server', { victim });
    await t.kill(victim);
    await t.waitFor((e) => e.kind === 'log' && e.msg === 'dead server processed', { timeoutMs: 10000, description: 'the dead region server to be processed' });
    const afterRs = await waitForCluster(t, hc, { servers: 2 });
    t.check('every region is reassigned', !afterRs.timedOut, afterRs);
    for (const [row, v] of Object.entries(expected)) {
      const r = await hc.get(row);
      t.check('acknowledged rows survive the region server crash', r.ok === true && r.value === v, { row, reply: r });
    }

    const master = await hc.activeMaster();
    t.note('killing the active master', { master });
    await t.kill(master);
    await t.waitFor((e) => e.kind === 'log' && e.msg === 'master initialized' && e.node !== master, { timeoutMs: 10000, description: 'the backup master to take over' });
    const afterMaster = await waitForCluster(t, hc, { servers: 2 });
    t.check('the backup master takes over with every region assigned', !afterMaster.timedOut, afterMaster);
    for (const row of rowsAcross('b', 20)) {
      const r = await hc.put(row, `w-${row}`);
      t.check('writes succeed under the new master', r.ok === true, { row, reply: r });
      expected[row] = `w-${row}`;
    }
    for (const [row, v] of Object.entries(expected)) {
      const r = await hc.get(row);
      t.check('every acknowledged row is readable', r.ok === true && r.value === v, { row, reply: r });
    }
    const online = await onlineRegions(t);
    t.check('no two online regions overlap', online.overlaps.length === 0, online);
    const missing = await waitForPeer(t, expected);
    t.check('every write is replicated to the peer cluster', missing.length === 0, { missing });
  },
};
