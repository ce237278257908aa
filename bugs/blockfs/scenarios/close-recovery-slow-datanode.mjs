// close-recovery-slow-datanode — a block's pipeline is recovered while one of its DataNodes is slow.
import { connect, waitForCensus, waitForDatanodes } from './lib/client.mjs';

const CLIENT = 'client-ingest';

export default {
  name: 'close-recovery-slow-datanode',
  description:
    'A file is created with replication 3 and its block written through a three-DataNode pipeline. The first ' +
    "DataNode's acknowledgement never reaches the client, so the client recovers the pipeline with the other two; " +
    'for a few seconds the second DataNode reaches the third only slowly, so the client gives up on that recovery ' +
    'and recovers with the second DataNode alone. The writer keeps the file open a few seconds longer, then closes ' +
    'it. The close must succeed, the file must read back, and the block must get back to three replicas with its ' +
    'current generation stamp, all known to the NameNode.',
  timeoutMs: 150000,
  async run(t) {
    const dfs = await connect(t, CLIENT);
    t.check('every DataNode registers', await waitForDatanodes(t, dfs));
    const path = '/ingest/events';
    const created = await dfs.nn('Create', { path, replication: 3 });
    t.check('the file is created', created.ok === true, { created });
    const alloc = await dfs.nn('AddBlock', { path, index: 0 });
    t.check('a block is allocated on three DataNodes', alloc.ok === true && alloc.targets.length === 3, { alloc });
    const [first, second, third] = alloc.targets;

    t.note('losing the first datanode\'s ack; slowing the second datanode\'s recovery traffic to the third', { first, second, third });
    t.addLinkFault({ from: first, to: CLIENT, type: 'WriteBlockResp', drop: 1 });
    t.addLinkFault({ from: second, to: third, type: 'RecoverBlock', delayMs: [4000, 4000] });
    const w = await dfs.writeBlock(path, 0, 'events#0', alloc);
    t.check('the block is written', w.ok === true, { w });
    await t.sleep(4000);
    t.clearLinkFaults();
    t.note('network healthy again; closing the file');

    const closed = await dfs.complete(path);
    t.check('the file is closed', closed.ok === true, { closed });
    const r = await dfs.readFile(path);
    t.check('the file reads back', r.ok === true && r.chunks.join() === 'events#0', { r });
    const healthy = (bs) => bs.length === 1 && bs.every((b) => b.actual.length === 3 && JSON.stringify(b.namenode) === JSON.stringify(b.actual));
    const after = await waitForCensus(t, healthy, 10000);
    t.check('the block has three replicas with its generation stamp, all known to the NameNode', healthy(after), { blocks: after });
  },
};
