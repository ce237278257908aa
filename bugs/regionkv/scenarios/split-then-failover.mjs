// split-then-failover — a region is split, then its server and the active master die together.
import { connect, hostOf, onlineRegions, rowsAcross, waitForCluster } from './lib/client.mjs';

export default {
  name: 'split-then-failover',
  description:
    'Rows are written to every region and the first region is split at "d". Then the active master and the ' +
    'region server hosting the daughters are killed at the same moment. The backup master must take over, ' +
    'every region must come back online, every acknowledged row must be readable and writable, and no two ' +
    'online regions may cover the same keys.',
  timeoutMs: 150000,
  async run(t) {
    const hc = await connect(t, 'client-split');
    const up = await waitForCluster(t, hc);
    t.check('the cluster comes up with every region assigned', !up.timedOut, up);
    const expected = {};
    for (const row of rowsAcross('a', 24)) {
      const r = await hc.put(row, `v-${row}`);
      t.check('put is acknowledged', r.ok === true, { row, reply: r });
      expected[row] = `v-${row}`;
    }
    const first = await hc.regionOf('a');
    const host = hostOf(first.server);
    const split = await hc.send(host, 'SplitRegion', { region: first.name, splitRow: 'd' }, 3000);
    t.check('the region is split', split.ok === true, { split });
    const settled = await waitForCluster(t, hc);
    t.check('the cluster settles after the split', !settled.timedOut, settled);
    for (const row of rowsAcross('b', 12)) {
      const r = await hc.put(row, `w-${row}`);
      t.check('put after the split is acknowledged', r.ok === true, { row, reply: r });
      expected[row] = `w-${row}`;
    }

    const master = await hc.activeMaster();
    t.note('killing the active master and the daughters\' region server', { master, regionServer: host });
    await Promise.all([t.kill(master), t.kill(host)]);
    await t.waitFor((e) => e.kind === 'log' && e.msg === 'master initialized' && e.node !== master, { timeoutMs: 10000, description: 'the backup master to take over' });
    const after = await waitForCluster(t, hc, { servers: 2 });
    t.check('every region is back online', !after.timedOut, after);
    for (const row of rowsAcross('c', 12)) {
      const r = await hc.put(row, `x-${row}`);
      t.check('writes succeed after the failover', r.ok === true, { row, reply: r });
      expected[row] = `x-${row}`;
    }
    for (const [row, v] of Object.entries(expected)) {
      const r = await hc.get(row);
      t.check('every acknowledged row is readable', r.ok === true && r.value === v, { row, reply: r });
    }
    await t.sleep(300);
    const online = await onlineRegions(t);
    t.note('online regions', online);
    t.check('no two online regions overlap', online.overlaps.length === 0, online);
  },
};
