// failover-after-pipeline-recovery — the NameNodes fail over while a file whose pipeline was recovered is still open.
import { connect, waitForCensus, waitForDatanodes } from './lib/client.mjs';

const CLIENT = 'client-ingest-ha';
const PATH = '/ingest/clicks';

export default {
  name: 'failover-after-pipeline-recovery',
  description:
    'A file is created with replication 3 and its block written through a three-DataNode pipeline. The first ' +
    "DataNode's acknowledgement never reaches the client, so the client recovers the pipeline with the other two; " +
    'the second DataNode reaches the third only slowly, so the client gives up on that recovery and recovers with ' +
    'the second DataNode alone. Once the slow recovery has reached the third DataNode, the active NameNode fails ' +
    'and the standby is made active. The new active NameNode must know the replica the abandoned recovery left ' +
    'behind as corrupt; the writer must be able to close the file through it, the file must read back, and the ' +
    'block must get back to three replicas with its current generation stamp, all known to the new active NameNode.',
  timeoutMs: 150000,
  async run(t) {
    const dfs = await connect(t, CLIENT);
    t.check('every DataNode registers', await waitForDatanodes(t, dfs));
    const created = await dfs.nn('Create', { path: PATH, replication: 3 });
    t.check('the file is created', created.ok === true, { created });
    const alloc = await dfs.nn('AddBlock', { path: PATH, index: 0 });
    t.check('a block is allocated on three DataNodes', alloc.ok === true && alloc.targets.length === 3, { alloc });
    const [first, second, third] = alloc.targets;

    t.note("losing the first datanode's ack; slowing the second datanode's recovery traffic to the third", { first, second, third });
    t.addLinkFault({ from: first, to: CLIENT, type: 'WriteBlockResp', drop: 1 });
    t.addLinkFault({ from: second, to: third, type: 'RecoverBlock', delayMs: [4000, 4000] });
    const slowRecovery = t.background(() =>
      t.waitFor((e) => e.kind === 'log' && e.node === third && e.msg === 'replica recovered', {
        timeoutMs: 20000,
        includePast: true,
        description: 'the slow recovery to reach the third DataNode',
      }),
    );
    const w = await dfs.writeBlock(PATH, 0, 'clicks#0', alloc);
    t.check('the block is written', w.ok === true, { w });
    await slowRecovery;
    t.clearLinkFaults();
    await t.sleep(500);

    t.note('failing over to the standby');
    await t.kill('nn');
    const up = await dfs.send('nn2', 'TransitionToActive', {}, 3000);
    t.check('the standby becomes active', up.ok === true, { up });
    const s = await t.state('nn2');
    const block = s?.blocks?.[w.block.id];
    t.check('the new active NameNode knows the replica the abandoned recovery left behind as corrupt', block?.corrupt?.includes(third) === true, { third, block });

    const closed = await dfs.complete(PATH);
    t.check('the file is closed after the failover', closed.ok === true, { closed, block: (await t.state('nn2'))?.blocks?.[w.block.id] });
    const r = await dfs.readFile(PATH);
    t.check('the file reads back', r.ok === true && r.chunks.join() === 'clicks#0', { r });
    const healthy = (bs) => bs.length === 1 && bs.every((b) => b.actual.length === 3 && JSON.stringify(b.namenode) === JSON.stringify(b.actual));
    const after = await waitForCensus(t, healthy, 10000, 'nn2');
    t.check('the block has three replicas with its generation stamp, all known to the new active NameNode', healthy(after), { blocks: after });
  },
};
