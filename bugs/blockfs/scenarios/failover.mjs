// failover — a DataNode dies and comes back.
import { connect, waitForCensus, waitForDatanodes } from './lib/client.mjs';

export default {
  name: 'failover',
  description:
    'Files are written; a DataNode holding replicas is killed: the NameNode declares it dead and re-replicates ' +
    'its blocks onto the remaining nodes, and every file stays readable. The DataNode is restarted with its ' +
    'disk: it registers again, new files can be written, and everything reads back.',
  timeoutMs: 150000,
  async run(t) {
    const dfs = await connect(t, 'client-failover');
    t.check('every DataNode registers', await waitForDatanodes(t, dfs));
    const files = {};
    for (let i = 0; i < 3; i++) {
      const path = `/logs/part-${i}`;
      const chunks = [`${path}#0`, `${path}#1`];
      const w = await dfs.writeFile(path, chunks);
      t.check('a file is written', w.ok === true, { path, w });
      files[path] = chunks;
    }
    const blocks = await waitForCensus(t, (bs) => bs.every((b) => b.actual.length === 3));
    const victim = blocks[0].actual[0];
    t.note('killing datanode', { victim });
    const dead = t.background(() => t.waitFor((e) => e.kind === 'log' && e.node === 'nn' && e.msg === 'datanode dead' && e.fields?.dn === victim, { timeoutMs: 10000, description: 'the NameNode to declare the DataNode dead' }));
    await t.kill(victim);
    await dead;
    const enough = (bs) => bs.every((b) => b.namenode.length >= b.replication && b.namenode.every((d) => d !== victim));
    const healed = await waitForCensus(t, enough);
    t.check('every block is re-replicated onto live DataNodes', enough(healed), { blocks: healed });
    for (const [path, chunks] of Object.entries(files)) {
      const r = await dfs.readFile(path);
      t.check('files stay readable without the dead DataNode', r.ok === true && JSON.stringify(r.chunks) === JSON.stringify(chunks), { path, r });
    }

    await t.restart(victim);
    t.check('the DataNode registers again', await waitForDatanodes(t, dfs));
    const w = await dfs.writeFile('/logs/after', ['after#0']);
    t.check('a file is written after the restart', w.ok === true, { w });
    files['/logs/after'] = ['after#0'];
    for (const [path, chunks] of Object.entries(files)) {
      const r = await dfs.readFile(path);
      t.check('every file reads back', r.ok === true && JSON.stringify(r.chunks) === JSON.stringify(chunks), { path, r });
    }
    const final = await waitForCensus(t, (bs) => bs.every((b) => b.namenode.length >= b.replication));
    t.check('no block is under-replicated', final.every((b) => b.namenode.length >= b.replication), { blocks: final });
  },
};
