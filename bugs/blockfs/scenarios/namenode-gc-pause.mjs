// namenode-gc-pause — the active NameNode stalls for longer than the dead-node interval.
import { connect, waitForCensus, waitForDatanodes } from './lib/client.mjs';

const DATANODES = ['dn1', 'dn2', 'dn3', 'dn4'];

export default {
  name: 'namenode-gc-pause',
  description:
    'Files are written with replication 3 and every replica is located. The active NameNode then stalls for ' +
    'three seconds (a long full GC), longer than the silence after which a DataNode is declared dead, three times ' +
    'a second and a half apart, while every DataNode keeps heartbeating. It must not declare any of those ' +
    'DataNodes dead; it must go ' +
    'on locating every replica, every file must read back and new files must be writable.',
  timeoutMs: 120000,
  async run(t) {
    const dfs = await connect(t, 'client-gc');
    t.check('every DataNode registers', await waitForDatanodes(t, dfs));
    const files = {};
    for (let i = 0; i < 2; i++) {
      const path = `/warehouse/p${i}`;
      const chunks = [`${path}#0`, `${path}#1`];
      const w = await dfs.writeFile(path, chunks);
      t.check('a file is written', w.ok === true, { path, w });
      files[path] = chunks;
    }
    const three = (bs) => bs.length === 4 && bs.every((b) => b.actual.length === 3 && JSON.stringify(b.namenode) === JSON.stringify(b.actual));
    const before = await waitForCensus(t, three);
    t.check('every block has three replicas, all located', three(before), { blocks: before });

    // Under memory pressure full GCs come back to back: three stalls, a second and a half apart.
    const from = t.events().length;
    for (let i = 0; i < 3; i++) {
      t.note('the active namenode stalls', { stall: i + 1 });
      await t.pause('nn');
      await t.sleep(3000);
      await t.resume('nn');
      await t.sleep(1500);
    }
    await t.sleep(1500);

    const dead = t
      .events()
      .slice(from)
      .filter((e) => e.kind === 'log' && e.node === 'nn' && e.msg === 'datanode dead')
      .map((e) => e.fields?.dn);
    t.check('no DataNode that kept heartbeating is declared dead', dead.length === 0, { dead, datanodes: DATANODES });
    const after = await waitForCensus(t, three, 10000);
    t.check('the NameNode still locates every replica', three(after), { blocks: after });
    for (const [path, chunks] of Object.entries(files)) {
      const r = await dfs.readFile(path);
      t.check('every file reads back', r.ok === true && JSON.stringify(r.chunks) === JSON.stringify(chunks), { path, r });
    }
    const w = await dfs.writeFile('/warehouse/after', ['after#0']);
    t.check('a file is written after the stall', w.ok === true, { w });
  },
};
