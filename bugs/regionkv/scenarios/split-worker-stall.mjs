// split-worker-stall — the region server splitting a dead server's WAL stalls until another one has taken the WAL over.
import { connect, crashDuringLogSplit, hostOf, onlineRegions, rowsAcross, waitForCluster } from './lib/client.mjs';

export default {
  name: 'split-worker-stall',
  description:
    'Rows are written to every region, most of them to the middle one, and the region server hosting the middle ' +
    'region is killed. The region server that starts splitting its WAL stalls in the middle of the split (the ' +
    'shared filesystem is slow at the time) until the master has given the WAL to another region server and that ' +
    'one has begun writing; then it wakes up, finds its ZooKeeper session expired and aborts. Every region must ' +
    'come back online, every acknowledged row must be readable, and writes must succeed.',
  timeoutMs: 150000,
  async run(t) {
    const hc = await connect(t, 'client-split-stall');
    const { expected } = await crashDuringLogSplit(t, hc, async (worker, victim) => {
      t.note('stalling the region server splitting the WAL', { worker });
      await t.pause(worker);
      const retried = await t.waitFor(
        (e) => e.kind === 'log' && e.msg === 'splitting log' && String(e.fields?.server ?? '').startsWith(`${victim},`) && hostOf(e.fields?.worker) !== worker,
        { timeoutMs: 20000, description: "the master to give the dead server's WAL to another region server" },
      );
      const next = hostOf(retried.fields.worker);
      // It is woken once the other server has a few appends of recovered edits behind it.
      let appends = 0;
      await t.waitFor(
        (e) => e.kind === 'recv' && e.node === 'zk' && e.msg === 'FsAppend' && e.peer === next && String(e.fields?.body?.file ?? '').includes(`/${victim},`) && ++appends >= 4,
        { timeoutMs: 10000, description: 'the other region server to write recovered edits', includePast: true },
      );
      t.note('waking the stalled region server', { worker, next });
      await t.resume(worker);
      await t.waitFor((e) => e.kind === 'log' && e.node === worker && e.msg === 'region server aborting', {
        timeoutMs: 10000,
        description: 'the stalled region server to abort',
        includePast: true,
      });
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
