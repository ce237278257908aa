// basic — the everyday behaviour of a healthy cluster.
import { connect, onlineRegions, rowsAcross, waitForCluster, waitForPeer } from './lib/client.mjs';

export default {
  name: 'basic',
  description:
    'A healthy cluster: the active master assigns the table\'s three regions, clients write and read rows in ' +
    'every region through hbase:meta, a region is split and its rows stay readable in the daughters, no two ' +
    'online regions overlap, and every write reaches the peer cluster.',
  timeoutMs: 150000,
  async run(t) {
    const hc = await connect(t, 'client-basic');
    const up = await waitForCluster(t, hc);
    t.check('the cluster comes up with every region assigned', !up.timedOut, up);

    const expected = {};
    for (const row of rowsAcross('r', 30)) {
      const r = await hc.put(row, `v-${row}`);
      t.check('put is acknowledged', r.ok === true, { row, reply: r });
      expected[row] = `v-${row}`;
    }
    for (const row of Object.keys(expected)) {
      const r = await hc.get(row);
      t.check('get returns the acknowledged value', r.ok === true && r.value === expected[row], { row, reply: r });
    }

    const first = await hc.regionOf('a');
    const host = first.server.split(',')[0];
    const split = await hc.send(host, 'SplitRegion', { region: first.name, splitRow: 'd' }, 3000);
    t.check('the region is split', split.ok === true && split.daughters.length === 2, { split });
    const after = await waitForCluster(t, hc);
    t.check('the cluster settles after the split', !after.timedOut, after);
    const rows = await hc.meta();
    const parent = rows.find((r) => r.name === first.name);
    t.check('meta marks the parent offline and split', parent?.offline === true && parent?.split === true, { parent });

    for (const row of rowsAcross('s', 20)) {
      const r = await hc.put(row, `w-${row}`);
      t.check('put after the split is acknowledged', r.ok === true, { row, reply: r });
      expected[row] = `w-${row}`;
    }
    for (const [row, v] of Object.entries(expected)) {
      const r = await hc.get(row);
      t.check('every row is readable after the split', r.ok === true && r.value === v, { row, reply: r });
    }
    const online = await onlineRegions(t);
    t.note('online regions', online);
    t.check('no two online regions overlap', online.overlaps.length === 0, online);
    t.check('four regions are online', online.regions.length === 4, online);

    const missing = await waitForPeer(t, expected);
    t.check('every write is replicated to the peer cluster', missing.length === 0, { missing });
  },
};
