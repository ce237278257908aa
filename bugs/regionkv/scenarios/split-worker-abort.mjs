// split-worker-abort — the region server splitting a dead server's WAL stalls and aborts.
import { connect, crashDuringLogSplit, onlineRegions, rowsAcross, waitForCluster } from './lib/client.mjs';

export default {
  name: 'split-worker-abort',
  description:
    'Rows are written to every region, most of them to the middle one, and the region server hosting the middle ' +
    'region is killed. The region server that starts splitting its WAL stalls in the middle of the split (the ' +
    'shared filesystem is slow at the time) for longer than its ZooKeeper session lasts, and aborts when it ' +
    'wakes. Every region must come back online, every acknowledged row must be readable, and writes must succeed.',
  timeoutMs: 150000,
  async run(t) {
    const hc = await connect(t, 'client-split-abort');
    const { expected } = await crashDuringLogSplit(t, hc, async (worker) => {
      t.note('stalling the region server splitting the WAL', { worker });
      await t.pause(worker);
      await t.sleep(3500);
      await t.resume(worker);
    });
    t.clearLinkFaults();
    const after = await waitForCluster(t, hc, { servers: 2 });
    t.check('every region is back online on a live server', !after.timedOut, after);
    for (const [row, v] of Object.entries(expected)) {
      const r = await hc.get(row, 10000);
      t.check('every acknowledged row is readable', r.ok === true && r.value === v, { row, reply: r });
    }
    for (const row of rowsAcross('c', 10)) {
      const r = await hc.put(row, `x-${row}`, 10000);
      t.check('writes succeed after the crash', r.ok === true, { row, reply: r });
    }
    const online = await onlineRegions(t);
    t.check('no two online regions overlap', online.overlaps.length === 0, online);
  },
};
