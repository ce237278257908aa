// split-server-crash — a region server dies right after it split a region, before the master heard of it.
import { connect, hostOf, onlineRegions, rowsAcross, waitForCluster } from './lib/client.mjs';

export default {
  name: 'split-server-crash',
  description:
    'Rows are written to every region. The region server hosting the first region cannot reach the masters ' +
    'with its region-state reports; it splits the region at "d", takes writes in both daughters, and then dies. The master must recover its ' +
    'regions: every key range must come back online on a live server, every acknowledged row must be readable ' +
    'and writable, and no two online regions may cover the same keys.',
  timeoutMs: 150000,
  async run(t) {
    const hc = await connect(t, 'client-split-crash');
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
    for (const m of ['master1', 'master2']) t.addLinkFault({ from: host, to: m, type: 'ReportRegionStateTransition', drop: 1 });
    const split = await hc.send(host, 'SplitRegion', { region: first.name, splitRow: 'd' }, 3000);
    t.check('the region is split', split.ok === true, { split });
    for (const row of ['b-after', 'e-after']) {
      const r = await hc.put(row, `w-${row}`);
      t.check('put to a daughter is acknowledged', r.ok === true, { row, reply: r });
      expected[row] = `w-${row}`;
    }
    t.note('killing the region server that split the region', { regionServer: host });
    await t.kill(host);
    t.clearLinkFaults();
    await t.waitFor((e) => e.kind === 'log' && e.msg === 'dead server processed', { timeoutMs: 10000, description: 'the dead region server to be processed' });
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
