// standby-failover-setrep — the standby takes over while its picture of the DataNodes' blocks is out of date.
import { connect, waitForCensus, waitForDatanodes } from './lib/client.mjs';

const DATANODES = ['dn1', 'dn2', 'dn3', 'dn4'];
const PATH = '/cold/archive';
const CHUNKS = ['archive#0', 'archive#1', 'archive#2', 'archive#3'];

export default {
  name: 'standby-failover-setrep',
  description:
    'A file of four blocks is written on all four DataNodes (replication 4), and both the active and the standby ' +
    'NameNode locate every replica. The file\'s replication is lowered to 1: the active NameNode has the excess ' +
    'replicas deleted, but the DataNodes\' reports of those deletions (incremental and full) do not reach the ' +
    'standby. The active NameNode then fails and the standby is made active. Every block must keep a replica and ' +
    'the file must read back; each block must end with exactly one replica, which the new active NameNode ' +
    'locates; and new files must be writable and readable through it.',
  timeoutMs: 150000,
  config: { blockReportIntervalMs: 1000 },
  async run(t) {
    const dfs = await connect(t, 'client-ha');
    t.check('every DataNode registers', await waitForDatanodes(t, dfs));
    const w = await dfs.writeFile(PATH, CHUNKS, 4);
    t.check('the file is written on four DataNodes', w.ok === true, { w });
    const everywhere = (bs) => bs.length === CHUNKS.length && bs.every((b) => b.actual.length === 4 && b.namenode.length === 4);
    const active = await waitForCensus(t, everywhere);
    const standby = await waitForCensus(t, everywhere, 15000, 'nn2');
    t.check('both NameNodes locate the four replicas of every block', everywhere(active) && everywhere(standby), { active, standby });

    t.note('the standby stops hearing of deletions');
    for (const dn of DATANODES) {
      for (const type of ['BlockDeleted', 'BlockReport']) t.addLinkFault({ from: dn, to: 'nn2', type, drop: 1 });
    }
    const set = await dfs.nn('SetReplication', { path: PATH, replication: 1 });
    t.check('replication is lowered to 1', set.ok === true, { set });
    const one = (bs) => bs.length === CHUNKS.length && bs.every((b) => b.actual.length === 1);
    const trimmed = await waitForCensus(t, one, 30000);
    t.check('the active NameNode has every block trimmed to one replica', one(trimmed), { blocks: trimmed });
    // Heartbeats, which still reach the standby, carry the DataNodes' new replica counts.
    await t.sleep(600);

    t.note('failing over to the standby');
    await t.kill('nn');
    const up = await dfs.send('nn2', 'TransitionToActive', {}, 3000);
    t.check('the standby becomes active', up.ok === true, { up });
    t.clearLinkFaults();

    const settled = (bs) => bs.length === CHUNKS.length && bs.every((b) => b.actual.length === 1 && b.namenode.join() === b.actual.join());
    const after = await waitForCensus(t, settled, 20000, 'nn2');
    t.check('every block keeps a replica', after.length === CHUNKS.length && after.every((b) => b.actual.length >= 1), { blocks: after });
    t.check('the new active NameNode locates the one replica of every block', settled(after), { blocks: after });
    const r = await dfs.readFile(PATH);
    t.check('the file reads back', r.ok === true && JSON.stringify(r.chunks) === JSON.stringify(CHUNKS), { r });

    const w2 = await dfs.writeFile('/cold/after-failover', ['after#0']);
    t.check('a file is written through the new active NameNode', w2.ok === true, { w2 });
    const r2 = await dfs.readFile('/cold/after-failover');
    t.check('the new file reads back', r2.ok === true && r2.chunks.join() === 'after#0', { r2 });
    const final = await waitForCensus(t, (bs) => bs.every((b) => b.actual.length >= 1 && b.namenode.length >= Math.min(b.replication, 3)), 15000, 'nn2');
    t.check('no block is missing or under-replicated after the failover', final.every((b) => b.actual.length >= 1 && b.namenode.length >= Math.min(b.replication, 3)), { blocks: final });
  },
};
