// transfer-follower-read — follower reads right after a write and a lease transfer.
import { brief, connect } from './lib/client.mjs';

const ROUNDS = 16;

export default {
  name: 'transfer-follower-read',
  description:
    'In each of sixteen rounds a client writes a new value to one key of range 1 and waits for the acknowledgement, ' +
    "then asks the range's leaseholder to transfer its lease to a second store and at once reads the key through " +
    'the third store (a follower read). Each read must return the value acknowledged just before it, and the ' +
    'range must keep taking writes.',
  timeoutMs: 180000,
  async run(t) {
    const kv = await connect(t, 'client-reader');
    const first = await kv.findLeaseholder(1);
    t.check('range 1 has a leaseholder', first !== null);
    const w0 = await kv.put('acct', 'v0');
    t.check('the first write is acknowledged', w0.ok === true, { w0 });
    let rounds = 0;
    // A round hits the stale-read window only sometimes (about one in five on containers), so there are many.
    for (let round = 1; round <= ROUNDS; round++) {
      await t.sleep(100 + Math.floor(t.random() * 100));
      const holder = await kv.findLeaseholder(1, 45000);
      t.check('range 1 has a leaseholder', holder !== null, { round });
      const i = t.nodes.indexOf(holder);
      const target = t.nodes[(i + 1) % 3];
      const reader = t.nodes[(i + 2) % 3];
      const value = `v${round}`;
      const w = await kv.put('acct', value);
      t.check('the write is acknowledged', w.ok === true, { round, w });
      const tr = await kv.send(kv.leaseholders.get(1), 'TransferLease', { rangeId: 1, target });
      const read = await kv.send(reader, 'Get', { key: 'acct', follower: true }, 8000);
      t.note('round', { round, holder, target, reader, transfer: tr.ok === true, read });
      t.check('the follower read is answered', read.ok === true, { round, reader, read });
      const state = read.value === value ? null : await t.state(reader).catch(() => null);
      t.check('a follower read returns the value acknowledged before it', read.value === value, { round, expected: value, read, reader: brief(state) });
      if (tr.ok) rounds++;
    }
    t.check('leases were transferred', rounds >= ROUNDS / 2, { rounds });
    const last = await kv.put('acct', 'final');
    t.check('writes succeed at the end', last.ok === true, { last });
  },
};
