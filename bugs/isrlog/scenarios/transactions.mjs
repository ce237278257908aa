// transactions — transactional producers, transaction markers and read_committed consumers.
import { brief, connect, converge, TxnProducer } from './lib/client.mjs';

export default {
  name: 'transactions',
  description:
    'Two transactional producers interleave: one commits, the other aborts, and a plain produce lands between ' +
    'their records; a read_committed consumer sees nothing of a transaction until it commits and never an aborted ' +
    'record. One producer then runs transactions back to back, commits one left open for 5 s across an admin leader move, and a new ' +
    'instance of the other fences the old one (its open transaction is aborted, its later produce and commit are ' +
    'refused). Every committed record is read back in order and every broker holds the same log.',
  timeoutMs: 150000,
  async run(t) {
    const lc = await connect(t, 'client-txn');
    const first = await lc.findLeader(30000);
    t.check('a leader is elected', first !== null);
    t.check('all three brokers are in sync', (await lc.waitIsr(lc.brokers(), 30000)) !== null);
    const ok = (name, r, details = {}) => t.check(name, r?.ok === true, { reply: r, ...details });
    const visible = [];
    const a = new TxnProducer(lc, 'tx-a');
    const b = new TxnProducer(lc, 'tx-b');
    ok('the first producer gets a producer id', await a.init());
    ok('the second producer gets a producer id', await b.init());
    /** Reads with read_committed until every transaction has ended; checks what is visible. */
    const settled = async (name) => {
      const c = await t.until(async () => {
        const r = await lc.consumeCommitted();
        return r.ok && r.lastStableOffset === r.highWatermark ? r : null;
      }, { timeoutMs: 10000, everyMs: 100, description: `the last stable offset reaches the high watermark (${name})` });
      t.check(`read_committed sees exactly the committed records (${name})`, c.records.map((r) => r.key).join() === visible.join(), { read: c.records.map((r) => r.key), visible });
    };

    // Two interleaved transactions and a plain produce.
    ok('a transaction begins', await a.begin());
    ok('a transactional produce is acknowledged', await a.produce('a1', 'x'));
    ok('a second transaction begins', await b.begin());
    ok('a transactional produce is acknowledged', await b.produce('b1', 'x'));
    ok('a transactional produce is acknowledged', await a.produce('a2', 'x'));
    ok('a plain produce is acknowledged', await lc.produce('p1', 'x'));
    const open = await lc.consumeCommitted();
    t.check('read_committed sees nothing while the first transaction is open', open.ok && open.records.length === 0, { open });
    ok('the first transaction commits', await a.end(true));
    ok('the second transaction aborts', await b.end(false));
    visible.push('a1', 'a2', 'p1');
    await settled('interleaved');

    // Transactions back to back, committed and aborted in turn.
    for (let i = 0; i < 5; i++) {
      ok('a transaction begins', await a.begin());
      ok('a transactional produce is acknowledged', await a.produce(`c${i}`, 'x'));
      ok('the transaction ends', await a.end(i % 2 === 0));
      if (i % 2 === 0) visible.push(`c${i}`);
    }
    await settled('back to back');

    // A transaction that spans an admin leader move.
    ok('a transaction begins', await a.begin());
    ok('a transactional produce is acknowledged', await a.produce('d1', 'x'));
    await t.sleep(5000);
    const slow = await lc.consumeCommitted();
    t.check('read_committed sees nothing of a transaction left open for a while', slow.ok && slow.records.map((r) => r.key).join() === visible.join(), { read: slow.records.map((r) => r.key), visible });
    const target = lc.brokers().find((n) => n !== first.leader);
    const moved = await lc.send('controller', 'ElectLeaders', { broker: target });
    t.check('leadership moves to another in-sync broker', moved.ok === true && moved.leader === target, { moved });
    t.check('the new leader serves', (await lc.findLeader(10000, [target])) !== null);
    ok('a transactional produce is acknowledged by the new leader', await a.produce('d2', 'x'));
    ok('the transaction commits', await a.end(true));
    visible.push('d1', 'd2');
    await settled('leader move');

    // A new instance of the second producer fences the old one.
    ok('a transaction begins', await b.begin());
    ok('a transactional produce is acknowledged', await b.produce('e1', 'x'));
    const b2 = new TxnProducer(lc, 'tx-b');
    ok('a new instance of the producer initialises', await b2.init());
    t.check('with a higher producer epoch', b2.producerEpoch > b.producerEpoch, { old: b.id, now: b2.id });
    const late = await b.produce('e2', 'x');
    t.check('the fenced producer cannot write', late.ok === false, { late });
    const fenced = await b.end(true);
    t.check('the fenced producer cannot commit', fenced.ok === false, { fenced });
    ok('the new instance begins a transaction', await b2.begin());
    ok('a transactional produce is acknowledged', await b2.produce('e3', 'x'));
    ok('the transaction commits', await b2.end(true));
    ok('a plain produce is acknowledged', await lc.produce('p2', 'x'));
    visible.push('e3', 'p2');
    await settled('fencing');

    const states = await converge(t, lc);
    t.note('brokers at the end', { states: states.map(brief) });
    t.check('every broker holds the same log', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
  },
};
