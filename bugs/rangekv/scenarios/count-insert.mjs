// count-insert — two transactions at a time count a table and insert the count.
import { brief, connect } from './lib/client.mjs';

const countInsert = async (txn, scan) => {
  const rows = await scan('tbl/', 'tbl0');
  return { result: rows.length, writes: [{ key: `tbl/${txn.id}`, value: String(rows.length) }] };
};

export default {
  name: 'count-insert',
  description:
    "n1's clock runs 3 s ahead of the others, and n1 holds the lease of both ranges. In each of six rounds two " +
    'clients run at the same moment a transaction that counts the rows of a table and inserts the count, one ' +
    'begun on n2 and one on n3, retrying when told to. Serializability demands that no two rows hold the same ' +
    'count, and every transaction must eventually commit.',
  timeoutMs: 180000,
  async run(t) {
    const a = await connect(t, 'client-a');
    const b = await connect(t, 'client-b');
    t.skewClock('n1', 3000);
    for (const rangeId of [1, 2]) {
      let holder = await a.findLeaseholder(rangeId);
      for (let i = 0; i < 5 && holder !== 'n1'; i++) {
        if (holder) await a.send(holder, 'TransferLease', { rangeId, target: 'n1' });
        await t.sleep(400);
        holder = await a.findLeaseholder(rangeId);
      }
      t.check('n1 holds the lease', holder === 'n1', { rangeId, holder });
    }
    b.leaseholders = new Map(a.leaseholders);

    const committed = [];
    for (let round = 0; round < 6; round++) {
      await t.sleep(150 + Math.floor(t.random() * 100));
      const [ra, rb] = await Promise.all([a.runTxn('n2', countInsert), b.runTxn('n3', countInsert)]);
      t.check('both transactions commit', ra.ok && rb.ok, { round, ra, rb });
      committed.push(ra, rb);
      t.note('round done', { round, a: { txn: ra.txn, count: ra.result, ts: ra.commitTs, attempts: ra.attempts }, b: { txn: rb.txn, count: rb.result, ts: rb.commitTs, attempts: rb.attempts } });
    }
    const check = await a.runTxn('n1', async (txn, scan) => ({ result: await scan('tbl/', 'tbl0'), writes: [{ key: 'audit/last', value: txn.id }] }));
    t.check('the table can be read', check.ok === true, { check });
    const counts = check.result.map((r) => Number(r.value)).sort((x, y) => x - y);
    const dups = counts.filter((c, i) => i > 0 && counts[i - 1] === c);
    const state = await t.state('n1').catch(() => null);
    t.check('no two transactions inserted the same count', dups.length === 0, { counts, dups, rows: check.result, store: brief(state) });
    t.check('every committed transaction has its row', counts.length === committed.length && counts.every((c, i) => c === i), { counts, committed: committed.length });
  },
};
