// basic — the everyday behaviour of a healthy cluster.
import { brief, connect, converge, rangeOf } from './lib/client.mjs';

const countInsert = async (txn, scan) => {
  const rows = await scan('tbl/', 'tbl0');
  return { result: rows.length, writes: [{ key: `tbl/${txn.id}`, value: String(rows.length) }] };
};

export default {
  name: 'basic',
  description:
    'A healthy cluster: both ranges get a leaseholder; a store without the lease redirects to it; writes and reads ' +
    'in both ranges, also through followers; a lease transfer moves range 1 to another store and writes go on; two transactions that each ' +
    'count a table and insert the count, one after the other, insert 0 then 1; every store ends with the same data.',
  timeoutMs: 180000,
  async run(t) {
    const kv = await connect(t, 'client-basic');
    const h1 = await kv.findLeaseholder(1);
    const h2 = await kv.findLeaseholder(2);
    t.check('both ranges have a leaseholder', h1 !== null && h2 !== null, { h1, h2 });
    const other = t.nodes.find((n) => n !== h1);
    const redirected = await kv.send(other, 'Put', { key: 'apple', value: 'x' });
    t.check('a store without the lease redirects', redirected.ok === false && redirected.error === 'NotLeaseHolderError' && typeof redirected.leader === 'string', { redirected });

    const expected = {};
    for (let i = 0; i < 10; i++) {
      for (const key of [`apple/${i}`, `zebra/${i}`]) {
        const r = await kv.put(key, `v${i}`);
        t.check('put is acknowledged', r.ok === true, { key, reply: r });
        expected[key] = `v${i}`;
      }
    }
    for (const [key, value] of Object.entries(expected)) {
      const r = await kv.get(key);
      t.check('get returns the acknowledged value', r.ok === true && r.value === value, { key, range: rangeOf(key), reply: r });
    }

    for (const key of ['apple/3', 'zebra/7']) {
      const holder = kv.leaseholders.get(rangeOf(key));
      const follower = t.nodes.find((n) => n !== holder);
      const r = await kv.send(follower, 'Get', { key, follower: true }, 8000);
      t.check('a follower read returns the acknowledged value', r.ok === true && r.value === expected[key], { key, follower, reply: r });
    }

    const target = t.nodes.find((n) => n !== h1);
    const tr = await kv.send(h1, 'TransferLease', { rangeId: 1, target });
    t.check('a lease transfer is accepted', tr.ok === true, { tr });
    const moved = await t.waitFor((e) => e.kind === 'log' && e.node === target && e.msg === 'acquired lease' && e.fields?.range === 1, { timeoutMs: 20000, description: 'the target to acquire the lease', includePast: true });
    t.note('lease moved', { from: h1, to: moved.node });
    const after = await kv.put('apple/after', 'moved');
    t.check('writes go on after the transfer', after.ok === true, { after });
    expected['apple/after'] = 'moved';

    const first = await kv.runTxn('n2', countInsert);
    const second = await kv.runTxn('n3', countInsert);
    t.check('sequential count-and-insert transactions insert 0 then 1', first.ok && second.ok && first.result === 0 && second.result === 1, { first, second });

    const states = await converge(t);
    t.check('every store holds the same data', states.length === 3 && new Set(states.map((s) => JSON.stringify(s.ranges.map((r) => r.data)))).size === 1, { states: states.map(brief) });
    for (const s of states) {
      const data = Object.assign({}, ...s.ranges.map((r) => r.data));
      const missing = Object.entries(expected).filter(([k, v]) => data[k]?.value !== v).map(([k]) => k);
      t.check('every acknowledged write is on every store', missing.length === 0, { node: s.id, missing });
    }
  },
};
