// basic — the everyday behaviour of a healthy cluster.
import { connect, waitForCensus, waitForDatanodes } from './lib/client.mjs';

export default {
  name: 'basic',
  description:
    'A healthy cluster: four DataNodes register, files are written through three-node pipelines and read ' +
    'back, every block has (at least) three replicas that the NameNode knows about, and raising a file\'s ' +
    'replication to four gets its blocks copied to the fourth DataNode.',
  timeoutMs: 150000,
  async run(t) {
    const dfs = await connect(t, 'client-basic');
    t.check('every DataNode registers', await waitForDatanodes(t, dfs));
    const files = {};
    for (let i = 0; i < 3; i++) {
      const path = `/data/file-${i}`;
      const chunks = [`${path}#0`, `${path}#1`];
      const w = await dfs.writeFile(path, chunks);
      t.check('a file is written', w.ok === true, { path, w });
      files[path] = chunks;
    }
    for (const [path, chunks] of Object.entries(files)) {
      const r = await dfs.readFile(path);
      t.check('a file reads back what was written', r.ok === true && JSON.stringify(r.chunks) === JSON.stringify(chunks), { path, r });
    }
    const replicated = (blocks) => blocks.every((b) => b.actual.length >= b.replication && b.namenode.length >= b.replication);
    const healthy = await waitForCensus(t, replicated);
    t.check('every block has its replication, known to the NameNode', replicated(healthy), { blocks: healthy });

    const up = await dfs.nn('SetReplication', { path: '/data/file-0', replication: 4 });
    t.check('replication is raised', up.ok === true, { up });
    const four = (blocks) => blocks.filter((b) => b.path === '/data/file-0').every((b) => b.actual.length === 4 && b.namenode.length >= 3);
    const raised = await waitForCensus(t, four);
    t.check('the blocks are copied to a fourth DataNode', four(raised), { blocks: raised.filter((b) => b.path === '/data/file-0') });
    const r = await dfs.readFile('/data/file-0');
    t.check('the file still reads back', r.ok === true && r.chunks[1] === '/data/file-0#1', { r });
  },
};
