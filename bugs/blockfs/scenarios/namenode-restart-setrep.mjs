// namenode-restart-setrep — lowering replication after the NameNode restarted.
import { connect, waitForCensus, waitForDatanodes } from './lib/client.mjs';

export default {
  name: 'namenode-restart-setrep',
  description:
    'A file of two blocks is written with replication 3. The NameNode is restarted; once every DataNode has ' +
    're-registered and every block is located again, the file\'s replication is lowered to 2. Within a few ' +
    'seconds each block must be down to two replicas, on the DataNodes and in the NameNode\'s map, and new ' +
    'files must still be writable and readable.',
  timeoutMs: 150000,
  async run(t) {
    const dfs = await connect(t, 'client-setrep');
    t.check('every DataNode registers', await waitForDatanodes(t, dfs));
    const w = await dfs.writeFile('/warehouse/table-a', ['a#0', 'a#1']);
    t.check('the file is written', w.ok === true, { w });
    const three = (bs) => bs.every((b) => b.actual.length === 3 && b.namenode.length === 3);
    const before = await waitForCensus(t, three);
    t.check('every block has three replicas', three(before), { blocks: before });

    t.note('restarting the namenode');
    await t.kill('nn');
    await t.restart('nn');
    t.check('every DataNode registers with the restarted NameNode', await waitForDatanodes(t, dfs));
    const located = await waitForCensus(t, (bs) => bs.length > 0 && bs.every((b) => b.namenode.length === 3));
    t.check('the restarted NameNode locates every replica', located.length > 0 && located.every((b) => b.namenode.length === 3), { blocks: located });

    const set = await dfs.nn('SetReplication', { path: '/warehouse/table-a', replication: 2 });
    t.check('replication is lowered to 2', set.ok === true, { set });
    const two = (bs) => bs.filter((b) => b.path === '/warehouse/table-a').every((b) => b.actual.length === 2 && b.namenode.length === 2);
    const after = await waitForCensus(t, two, 10000);
    t.check('each block is down to two replicas', two(after), { blocks: after });

    const w2 = await dfs.writeFile('/warehouse/table-b', ['b#0']);
    t.check('a new file is written', w2.ok === true, { w2 });
    const r = await dfs.readFile('/warehouse/table-a');
    const r2 = await dfs.readFile('/warehouse/table-b');
    t.check('both files read back', r.ok === true && r.chunks.join() === 'a#0,a#1' && r2.ok === true && r2.chunks.join() === 'b#0', { r, r2 });
  },
};
