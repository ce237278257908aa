// late-produce-after-abort — a transactional produce reaches the leader after its transaction was aborted.
import { poll } from '../../lib/scenario-lib.mjs';
import { brief, connect, converge, TxnProducer } from './lib/client.mjs';

export default {
  name: 'late-produce-after-abort',
  description:
    'A transactional producer begins a transaction and writes one record. Its next produce request is held up on ' +
    'the way to the leader for 3 s; the producer times out, aborts the transaction, and the abort completes before ' +
    'the held-up request arrives. Another producer then commits a transaction. A read_committed consumer must see ' +
    'the committed records and none of the aborted ones, and the last stable offset must reach the high watermark.',
  timeoutMs: 120000,
  async run(t) {
    const lc = await connect(t, 'client-0');
    const first = await lc.findLeader(30000);
    t.check('a leader is elected', first !== null);
    t.check('all three brokers are in sync', (await lc.waitIsr(lc.brokers(), 30000)) !== null);
    const L = first.leader;
    const ok = (name, r) => t.check(name, r?.ok === true, { reply: r });

    const orders = new TxnProducer(lc, 'tx-orders');
    ok('the producer gets a producer id', await orders.init());
    ok('a transaction begins', await orders.begin());
    ok('a transactional produce is acknowledged', await orders.produce('o1', 'x'));
    t.addLinkFault({ from: 'client-0', to: L, type: 'Produce', delayMs: [3000, 3000] });
    const slow = await lc.send(L, 'Produce', { key: 'o2', value: 'x', ...orders.id }, 1000);
    t.note('the second produce timed out', { slow });
    ok('the producer aborts the transaction', await orders.end(false));
    const ended = await t.until(async () => {
      const r = await lc.consumeCommitted(L);
      return r.ok && r.lastStableOffset === r.highWatermark ? r : null;
    }, { timeoutMs: 2000, everyMs: 50, description: 'the abort to complete' });
    t.note('the abort completed', { lastStableOffset: ended.lastStableOffset, highWatermark: ended.highWatermark });
    await t.sleep(3000);
    t.clearLinkFaults();

    const lc2 = await connect(t, 'client-1');
    lc2.leader = L;
    const payments = new TxnProducer(lc2, 'tx-payments');
    ok('another producer gets a producer id', await payments.init());
    ok('its transaction begins', await payments.begin());
    ok('a transactional produce is acknowledged', await payments.produce('q1', 'x'));
    ok('a transactional produce is acknowledged', await payments.produce('q2', 'x'));
    ok('the transaction commits', await payments.end(true));

    const committed = (r) => r.ok && ['q1', 'q2'].every((k) => r.records.some((rec) => rec.key === k));
    const read = (await poll(t, () => lc2.consumeCommitted(L), { timeoutMs: 10000, everyMs: 100, done: committed })).value;
    const keys = read.records.map((r) => r.key);
    t.check('a read_committed consumer sees the committed transaction', ['q1', 'q2'].every((k) => keys.includes(k)), { read: keys, lastStableOffset: read.lastStableOffset, highWatermark: read.highWatermark });
    t.check('no record of the aborted transaction is visible', !keys.includes('o1') && !keys.includes('o2'), { read: keys });
    t.check('the last stable offset reaches the high watermark', read.lastStableOffset === read.highWatermark, { lastStableOffset: read.lastStableOffset, highWatermark: read.highWatermark });
    const states = await converge(t, lc);
    t.note('brokers at the end', { states: states.map((s) => ({ ...brief(s), lastStableOffset: s.lastStableOffset, openTransactions: s.openTransactions })) });
    t.check('every broker holds the same log', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
  },
};
