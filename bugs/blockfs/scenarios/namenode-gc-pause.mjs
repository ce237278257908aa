// namenode-gc-pause — the active NameNode stalls for longer than the dead-node interval.
import { connect, waitForCensus, waitForDatanodes } from './lib/client.mjs';

const DATANODES = ['dn1', 'dn2', 'dn3', 'dn4'];
const STALLS_MS = [3000, 6000, 10000];

export default {
  name: 'namenode-gc-pause',
  description:
    'Files are written with replication 3 and every replica is located. The active NameNode then stalls three ' +
    'times, a second and a half apart, for 3, 6 and 10 seconds (back-to-back full GCs), each longer than the ' +
    'silence after which a DataNode is declared dead, while every DataNode keeps heartbeating. It must not ' +
    'declare any of those DataNodes dead nor make any of them register again; it must go on locating every ' +
    'replica, every file must read back and new files must be writable.',
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

    // Under memory pressure full GCs come back to back, each longer than the last.
    const from = t.events().length;
    for (const stallMs of STALLS_MS) {
      t.note('the active namenode stalls', { stallMs });
      await t.pause('nn');
      await t.sleep(stallMs);
      await t.resume('nn');
      await t.sleep(1500);
    }
    await t.sleep(1500);

    const since = t.events().slice(from);
    const dead = since.filter((e) => e.kind === 'log' && e.node === 'nn' && e.msg === 'datanode dead').map((e) => e.fields?.dn);
    t.check('no DataNode that kept heartbeating is declared dead', dead.length === 0, { dead, datanodes: DATANODES });
    const asked = since.filter((e) => e.kind === 'log' && DATANODES.includes(e.node) && e.msg === 'namenode asked to re-register' && e.fields?.nn === 'nn').map((e) => e.node);
    const registered = since.filter((e) => e.kind === 'log' && e.node === 'nn' && e.msg === 'datanode registered').map((e) => e.fields?.dn);
    t.check('no DataNode has to register with the NameNode again', asked.length === 0 && registered.length === 0, { asked, registered });
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
