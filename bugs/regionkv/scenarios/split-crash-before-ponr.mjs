// split-crash-before-ponr — a region server dies in the middle of a split, before meta records it.
import { connect, hostOf, onlineRegions, rowsAcross, waitForCluster } from './lib/client.mjs';

export default {
  name: 'split-crash-before-ponr',
  description:
    'Rows are written to every region. The region server hosting the first region starts splitting it at "d", ' +
    'but its writes to the shared filesystem stop getting through, and it dies before the split is recorded in ' +
    'hbase:meta. The master must recover its regions: every key range must come back online on a live server, ' +
    'every acknowledged row must be readable and writable, and no two online regions may cover the same keys.',
  timeoutMs: 150000,
  async run(t) {
    const hc = await connect(t, 'client-split-abort');
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
    t.addLinkFault({ from: host, to: 'zk', type: 'FsAppend', drop: 1 });
    const split = hc.send(host, 'SplitRegion', { region: first.name, splitRow: 'd' }, 3000);
    await t.until(async () => ((await hc.send('zk', 'ZkChildren', { path: '/hbase/region-in-transition' })).children ?? []).length > 0, {
      timeoutMs: 5000,
      description: 'the split to start',
    });
    t.note('killing the region server in the middle of the split', { regionServer: host });
    await t.kill(host);
    t.clearLinkFaults();
    await split;
    await t.waitFor((e) => e.kind === 'log' && e.msg === 'dead server processed', { timeoutMs: 10000, description: 'the dead region server to be processed', includePast: true });
    const after = await waitForCluster(t, hc, { servers: 2 });
    t.check('every region is back online on a live server', !after.timedOut, after);
    for (const row of rowsAcross('c', 12)) {
      const r = await hc.put(row, `x-${row}`, 10000);
      t.check('writes succeed after the crash', r.ok === true, { row, reply: r });
      expected[row] = `x-${row}`;
    }
    for (const [row, v] of Object.entries(expected)) {
      const r = await hc.get(row, 10000);
      t.check('every acknowledged row is readable', r.ok === true && r.value === v, { row, reply: r });
    }
    const online = await onlineRegions(t);
    t.note('online regions', online);
    t.check('no two online regions overlap', online.overlaps.length === 0, online);
  },
};
