// compaction — deletes, overwrites, flushes and compactions across restarts.
import { brief, connect, keysByShard } from './lib/client.mjs';

export default {
  name: 'compaction',
  description:
    'Rows of both shards are written at ALL and flushed; some rows of one shard are deleted and some ' +
    'overwritten, and writes to that shard go on with a flush after each batch, so it compacts while its ' +
    "first sstable is still shared with the other shard. A node restarts: every replica keeps every row " +
    'that was not deleted and none that was. Past gc grace, writes to both shards go on with flushes: ' +
    'regular compactions must in the end drop every tombstone, and after another restart reads at ALL ' +
    'still find exactly the rows that were not deleted, with their newest values.',
  timeoutMs: 180000,
  config: { gcGraceMs: 3000 },
  async run(t) {
    const kv = await connect(t, 'client-compaction');
    const views = await kv.waitViews(t.nodes, { live: t.nodes, ring: t.nodes, timeoutMs: 60000 });
    t.check('every node sees the whole ring up', views.ok, { statuses: views.statuses.map(brief) });
    const smp = (await t.state(t.nodes[0])).smp;
    const gcGraceMs = 3000;

    const expected = {};
    const deleted = new Set();
    const put = async (node, k, v) => {
      const r = await kv.put(node, k, v, 'ALL');
      t.check('a write at ALL is acknowledged', r.ok === true, { key: k, reply: r });
      expected[k] = v;
      deleted.delete(k);
    };
    const rows = keysByShard('row', 8, smp);
    for (const keys of rows) for (const k of keys) await put(t.nodes[0], k, `${k}:v1`);
    await kv.flushAll();
    for (const k of rows[0].slice(0, 4)) {
      const r = await kv.del(t.nodes[2], k, 'ALL');
      t.check('a delete at ALL is acknowledged', r.ok === true, { key: k, reply: r });
      delete expected[k];
      deleted.add(k);
    }
    for (const k of rows[0].slice(4)) await put(t.nodes[3], k, `${k}:v2`);
    await kv.flushAll();
    const more = keysByShard('more', 8, smp)[0];
    for (let b = 0; b < 2; b++) {
      for (const k of more.slice(b * 4, b * 4 + 4)) await put(t.nodes[b], k, `${k}:v1`);
      await kv.flushAll();
    }

    // Each node's replicas of each row, to compare with what every node holds.
    const replicasOf = {};
    for (const k of [...Object.keys(expected), ...deleted]) replicasOf[k] = (await kv.send(t.nodes[0], 'GetEndpoints', { key: k })).endpoints;
    const checkHeld = async (when) => {
      const states = await Promise.all(t.nodes.map((n) => t.state(n)));
      const wrong = [];
      for (const s of states) {
        for (const [k, v] of Object.entries(expected)) if (replicasOf[k]?.includes(s.id) && s.kv[k] !== v) wrong.push({ node: s.id, key: k, want: v, has: s.kv[k] ?? null });
        for (const k of deleted) if (s.kv[k] !== undefined) wrong.push({ node: s.id, key: k, want: null, has: s.kv[k] });
      }
      t.check(`every replica holds exactly the rows not deleted (${when})`, wrong.length === 0, { wrong: wrong.slice(0, 10), count: wrong.length });
    };
    const restart = async (when) => {
      const victim = t.nodes[Math.floor(t.random() * t.nodes.length)];
      await t.kill(victim);
      await t.restart(victim);
      t.note('restarted a node', { victim, when });
      const up = await kv.waitViews(t.nodes, { live: t.nodes, timeoutMs: 15000 });
      t.check('every node sees all four up after a restart', up.ok, { statuses: up.statuses.map(brief) });
      await checkHeld(when);
    };
    await restart('within gc grace');

    // Past gc grace, regular compactions drop the tombstones as writes to both shards go on.
    await t.sleep(gcGraceMs + 500);
    const later = keysByShard('later', 48, smp);
    let purged = false;
    for (let b = 0; b < 12 && !purged; b++) {
      for (const keys of later) for (const k of keys.slice(b * 4, b * 4 + 4)) await put(t.nodes[b % t.nodes.length], k, `${k}:v1`);
      await kv.flushAll();
      const states = await Promise.all(t.nodes.map((n) => t.state(n)));
      purged = states.every((s) => s.tombstones === 0);
    }
    const final = await Promise.all(t.nodes.map((n) => t.state(n)));
    t.check('regular compactions drop every tombstone past gc grace', purged, {
      tombstones: final.map((s) => ({ id: s.id, tombstones: s.tombstones, sstables: s.sstables })),
    });
    await restart('past gc grace');

    for (const [i, k] of [...deleted].entries()) {
      const r = await kv.get(t.nodes[i % t.nodes.length], k, 'ALL');
      t.check('a deleted row is not found', r.ok === true && r.found === false, { key: k, reply: r });
    }
    for (const [i, [k, v]] of Object.entries(expected).entries()) {
      const r = await kv.get(t.nodes[i % t.nodes.length], k, 'ALL');
      t.check('a row that was not deleted is found with its newest value', r.ok === true && r.value === v, { key: k, reply: r });
    }
  },
};
