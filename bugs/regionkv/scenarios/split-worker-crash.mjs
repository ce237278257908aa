// split-worker-crash — the region server splitting a dead server's WAL dies too.
import { connect, crashDuringLogSplit, onlineRegions, rowsAcross, waitForCluster } from './lib/client.mjs';

export default {
  name: 'split-worker-crash',
  description:
    'Rows are written to every region, most of them to the middle one, and the region server hosting the middle ' +
    'region is killed. The region server that starts splitting its WAL is killed in the middle of the split ' +
    '(the shared filesystem is slow at the time). The master must have the WAL split again: the last region ' +
    'server must end up serving every region, every acknowledged row must be readable, and writes must succeed.',
  timeoutMs: 150000,
  async run(t) {
    const hc = await connect(t, 'client-split-worker');
    const { expected } = await crashDuringLogSplit(t, hc, async (worker) => {
      t.note('killing the region server splitting the WAL', { worker });
      await t.kill(worker);
    });
    t.clearLinkFaults();
    const after = await waitForCluster(t, hc, { servers: 1 });
    t.check('the last region server serves every region', !after.timedOut, after);
    for (const [row, v] of Object.entries(expected)) {
      const r = await hc.get(row, 10000);
      t.check('every acknowledged row is readable', r.ok === true && r.value === v, { row, reply: r });
    }
    for (const row of rowsAcross('c', 10)) {
      const r = await hc.put(row, `x-${row}`, 10000);
      t.check('writes succeed after the crashes', r.ok === true, { row, reply: r });
    }
    const online = await onlineRegions(t);
    t.check('no two online regions overlap', online.overlaps.length === 0, online);
  },
};
