// datanode-partition-rejoin — a DataNode cut off from the NameNode long enough to be declared dead, then back.
import { connect, waitForCensus, waitForDatanodes } from './lib/client.mjs';

export default {
  name: 'datanode-partition-rejoin',
  description:
    'A file of two blocks is written with replication 3 on a four-DataNode cluster. One DataNode holding ' +
    'replicas loses its link to the NameNode (both directions) until it is declared dead and its blocks are ' +
    're-replicated; then the link comes back. Within a few seconds the NameNode must again know every replica ' +
    'the DataNodes hold, each block must be back to exactly three replicas, and files must stay writable and ' +
    'readable.',
  timeoutMs: 150000,
  async run(t) {
    const dfs = await connect(t, 'client-rejoin');
    t.check('every DataNode registers', await waitForDatanodes(t, dfs));
    const w = await dfs.writeFile('/jobs/input', ['in#0', 'in#1']);
    t.check('the file is written', w.ok === true, { w });
    const before = await waitForCensus(t, (bs) => bs.every((b) => b.actual.length === 3 && b.namenode.length === 3));
    const victim = before[0].actual[0];

    t.note('cutting the datanode off from the namenode', { victim });
    const dead = t.background(() => t.waitFor((e) => e.kind === 'log' && e.node === 'nn' && e.msg === 'datanode dead' && e.fields?.dn === victim, { timeoutMs: 10000, description: 'the NameNode to declare the DataNode dead' }));
    t.addLinkFault({ from: victim, to: 'nn', drop: 1 });
    t.addLinkFault({ from: 'nn', to: victim, drop: 1 });
    await dead;
    const rereplicated = (bs) => bs.every((b) => b.namenode.length === 3 && !b.namenode.includes(victim));
    const mid = await waitForCensus(t, rereplicated);
    t.check("the dead DataNode's blocks are re-replicated", rereplicated(mid), { blocks: mid });
    t.clearLinkFaults();
    t.note('link restored', { victim });

    t.check('the DataNode is live again', await waitForDatanodes(t, dfs));
    const consistent = (bs) => bs.every((b) => b.actual.length === 3 && JSON.stringify(b.namenode) === JSON.stringify(b.actual));
    const after = await waitForCensus(t, consistent, 10000);
    t.check('the NameNode knows every replica and each block has exactly three', consistent(after), { blocks: after });

    const w2 = await dfs.writeFile('/jobs/output', ['out#0']);
    t.check('a new file is written', w2.ok === true, { w2 });
    const r = await dfs.readFile('/jobs/input');
    t.check('the input reads back', r.ok === true && r.chunks.join() === 'in#0,in#1', { r });
  },
};
