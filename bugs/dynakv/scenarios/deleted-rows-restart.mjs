// deleted-rows-restart — rows are deleted, the nodes flush and compact on, and one node restarts.
import { brief, connect, keysByShard } from './lib/client.mjs';

export default {
  name: 'deleted-rows-restart',
  description:
    'Rows of both shards are written at ALL and every node flushes. Then the rows of one shard are deleted at ' +
    'ALL, and writes to that shard go on, each batch followed by a flush on every node, so that shard compacts ' +
    'now and then, before and after the deletions are older than gc grace. One node is then killed and ' +
    'restarted. Reads at ALL through every node must find none of the deleted rows and every other row, and ' +
    'no node may hold a deleted row.',
  timeoutMs: 120000,
  config: { gcGraceMs: 4000 },
  async run(t) {
    const kv = await connect(t, 'client-deletes');
    const views = await kv.waitViews(t.nodes, { live: t.nodes, ring: t.nodes, timeoutMs: 60000 });
    t.check('every node sees the whole ring up', views.ok, { statuses: views.statuses.map(brief) });
    const first = await t.state(t.nodes[0]);
    const smp = first.smp;
    const gcGraceMs = 4000;
    // Rows of every shard, so each node's first sstable is shared by its shards.
    const rows = keysByShard('row', 8, smp);
    const expected = {};
    for (const keys of rows) {
      for (const k of keys) {
        const r = await kv.put(t.nodes[0], k, `${k}:v1`, 'ALL');
        t.check('a write at ALL is acknowledged', r.ok === true, { key: k, reply: r });
        expected[k] = `${k}:v1`;
      }
    }
    await kv.flushAll();

    const doomed = rows[0];
    for (const k of doomed) {
      const r = await kv.del(t.nodes[1], k, 'ALL');
      t.check('a delete at ALL is acknowledged', r.ok === true, { key: k, reply: r });
      delete expected[k];
    }
    await kv.flushAll();

    // More writes to the shard whose rows were deleted, a flush after each batch.
    const more = keysByShard('more', 24, smp)[0];
    let batch = 0;
    const writeBatch = async () => {
      for (const k of more.slice(batch * 4, batch * 4 + 4)) {
        const r = await kv.put(t.nodes[batch % t.nodes.length], k, `${k}:v1`, 'ALL');
        t.check('a write at ALL is acknowledged', r.ok === true, { key: k, reply: r });
        expected[k] = `${k}:v1`;
      }
      batch++;
      await kv.flushAll();
    };
    for (let i = 0; i < 2; i++) await writeBatch();
    await t.sleep(gcGraceMs + 1000);
    for (let i = 0; i < 3; i++) await writeBatch();

    const victim = t.nodes[Math.floor(t.random() * t.nodes.length)];
    await t.kill(victim);
    await t.restart(victim);
    t.note('restarted a node', { victim });
    const up = await kv.waitViews(t.nodes, { live: t.nodes, timeoutMs: 15000 });
    t.check('every node sees all four up after the restart', up.ok, { statuses: up.statuses.map(brief) });

    const held = (await Promise.all(t.nodes.map((n) => t.state(n)))).map((s) => ({
      id: s.id,
      deleted: doomed.filter((k) => s.kv[k] !== undefined),
    }));
    t.check('no node holds a deleted row', held.every((h) => h.deleted.length === 0), { held });
    for (const [i, k] of doomed.entries()) {
      const r = await kv.get(t.nodes[i % t.nodes.length], k, 'ALL');
      t.check('a deleted row is not found', r.ok === true && r.found === false, { key: k, reply: r });
    }
    for (const [i, [k, v]] of Object.entries(expected).entries()) {
      const r = await kv.get(t.nodes[i % t.nodes.length], k, 'ALL');
      t.check('a row that was not deleted is found', r.ok === true && r.value === v, { key: k, reply: r });
    }
  },
};
