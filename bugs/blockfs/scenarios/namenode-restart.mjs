// namenode-restart — the active NameNode restarts from its saved fsimage.
import { connect, waitForCensus, waitForDatanodes } from './lib/client.mjs';

export default {
  name: 'namenode-restart',
  description:
    'Files are written with replication 3. The active NameNode is restarted and loads its saved fsimage; once it ' +
    'has started, it must count every DataNode live, locate every replica the DataNodes hold, read every file ' +
    'back and take new files.',
  timeoutMs: 150000,
  async run(t) {
    const dfs = await connect(t, 'client-restart');
    t.check('every DataNode registers', await waitForDatanodes(t, dfs));
    const files = {};
    for (let i = 0; i < 2; i++) {
      const path = `/tables/t${i}`;
      const chunks = [`${path}#0`, `${path}#1`];
      const w = await dfs.writeFile(path, chunks);
      t.check('a file is written', w.ok === true, { path, w });
      files[path] = chunks;
    }
    const three = (bs) => bs.every((b) => b.actual.length === 3 && b.namenode.length === 3);
    const before = await waitForCensus(t, three);
    t.check('every block has three replicas', three(before), { blocks: before });

    t.note('restarting the active namenode');
    await t.kill('nn');
    await t.restart('nn');
    t.check('every DataNode registers with the restarted NameNode', await waitForDatanodes(t, dfs));
    const same = (bs) => bs.length === 4 && bs.every((b) => b.actual.length === 3 && JSON.stringify(b.namenode) === JSON.stringify(b.actual));
    const located = await waitForCensus(t, same, 10000);
    t.check('the restarted NameNode locates every replica the DataNodes hold', same(located), { blocks: located });

    const w = await dfs.writeFile('/tables/after', ['after#0']);
    t.check('a file is written after the restart', w.ok === true, { w });
    files['/tables/after'] = ['after#0'];
    for (const [path, chunks] of Object.entries(files)) {
      const r = await dfs.readFile(path);
      t.check('every file reads back', r.ok === true && JSON.stringify(r.chunks) === JSON.stringify(chunks), { path, r });
    }
  },
};
