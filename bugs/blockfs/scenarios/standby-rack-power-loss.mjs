// standby-rack-power-loss — the standby NameNode and a DataNode lose power together, then fail over.
import { connect, waitForCensus, waitForDatanodes } from './lib/client.mjs';

export default {
  name: 'standby-rack-power-loss',
  description:
    'Files are written with replication 3. The rack holding the standby NameNode and one DataNode loses power; ' +
    'power comes back and both start again, the DataNode while the standby is still loading its fsimage. Later ' +
    'the active NameNode fails and the standby is made active. The new active NameNode must count every ' +
    'DataNode live, locate every replica the DataNodes hold, read every file back and take new files.',
  timeoutMs: 150000,
  async run(t) {
    const dfs = await connect(t, 'client-rack');
    t.check('every DataNode registers', await waitForDatanodes(t, dfs));
    const files = {};
    for (let i = 0; i < 2; i++) {
      const path = `/metrics/day-${i}`;
      const chunks = [`${path}#0`, `${path}#1`];
      const w = await dfs.writeFile(path, chunks);
      t.check('a file is written', w.ok === true, { path, w });
      files[path] = chunks;
    }
    const three = (bs) => bs.every((b) => b.actual.length === 3 && b.namenode.length === 3);
    const before = await waitForCensus(t, three);
    t.check('every block has three replicas', three(before), { blocks: before });
    const txid = (await t.state('nn')).namespace.txid;
    await t.until(async () => (await t.state('nn2').catch(() => null))?.namespace?.txid >= txid, { timeoutMs: 10000, description: 'the standby to load the edits' });
    const dn = before[0].actual[t.random() < 0.5 ? 0 : 1];

    t.note('the rack of nn2 loses power', { dn });
    await t.kill('nn2');
    await t.kill(dn);
    await t.sleep(1000);
    t.note('power is back');
    await t.restart('nn2');
    await t.restart(dn);
    await t.until(async () => (await t.state('nn2').catch(() => null))?.datanodes?.length > 0, { timeoutMs: 20000, description: 'nn2 to start' });
    await t.sleep(3000);

    t.note('the active namenode fails; making nn2 active');
    await t.kill('nn');
    const up = await dfs.send('nn2', 'TransitionToActive', {}, 3000);
    t.check('the standby becomes active', up.ok === true, { up });
    const all = (await dfs.nn('Fsck', {})).liveNodes ?? [];
    t.check('the new active NameNode counts every DataNode live', all.length === 4, { liveNodes: all });
    const same = (bs) => bs.length === 4 && bs.every((b) => b.actual.length >= 3 && JSON.stringify(b.namenode) === JSON.stringify(b.actual));
    const located = await waitForCensus(t, same, 10000, 'nn2');
    t.check('the new active NameNode locates every replica the DataNodes hold', same(located), { blocks: located });

    const w = await dfs.writeFile('/metrics/after', ['after#0']);
    t.check('a file is written after the failover', w.ok === true, { w });
    files['/metrics/after'] = ['after#0'];
    for (const [path, chunks] of Object.entries(files)) {
      const r = await dfs.readFile(path);
      t.check('every file reads back', r.ok === true && JSON.stringify(r.chunks) === JSON.stringify(chunks), { path, r });
    }
  },
};
