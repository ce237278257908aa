// split-follower-read — a follower read through a store that was cut off while its range split.
import { brief, connect } from './lib/client.mjs';

export default {
  name: 'split-follower-read',
  description:
    "Writes v1 to key 'x' in range 2, then cuts one store that is not range 2's leaseholder off from the others. " +
    "Range 2 splits at 's' (so 'x' moves to the new range 3) and v2 is written to 'x' and acknowledged. A client " +
    'then asks the cut-off store for a follower read of x, and the network heals. The read (retried while the ' +
    'store answers with a retryable error) must return v2, and both ranges must keep taking writes.',
  timeoutMs: 120000,
  async run(t) {
    const kv = await connect(t, 'client-reader');
    const h2 = await kv.findLeaseholder(2);
    t.check('range 2 has a leaseholder', h2 !== null);
    const w1 = await kv.toRange(2, 'Put', { key: 'x', value: 'v1' });
    t.check('the first write is acknowledged', w1.ok === true, { w1 });
    const reader = t.nodes.find((n) => n !== kv.leaseholders.get(2));
    const others = t.nodes.filter((n) => n !== reader);
    // Let the reader apply the first write before it is cut off.
    await t.until(async () => (await t.state(reader).catch(() => null))?.ranges.find((r) => r.rangeId === 2)?.data.x?.value === 'v1', { timeoutMs: 10000, description: 'the reader to apply v1' });
    t.partition([[reader], others]);
    t.note('cut off a store', { reader });
    const split = await kv.toRange(2, 'AdminSplit', { key: 's' });
    t.check('the split is acknowledged', split.ok === true && split.right === 3, { split });
    const h3 = await kv.findLeaseholder(3, 45000, others);
    t.check('the right-hand range elects a leaseholder', h3 !== null, { h3 });
    const w2 = await kv.toRange(3, 'Put', { key: 'x', value: 'v2' });
    t.check('the second write is acknowledged', w2.ok === true, { w2 });
    const pending = kv.send(reader, 'Get', { key: 'x', follower: true }, 20000);
    await t.sleep(3000);
    t.heal();
    let read = await pending;
    for (let i = 0; i < 10 && !read.ok && read.error !== 'timeout'; i++) {
      await t.sleep(200);
      read = await kv.send(reader, 'Get', { key: 'x', follower: true }, 8000);
    }
    t.note('follower read', { reader, read });
    t.check('the follower read is answered', read.ok === true, { reader, read });
    const state = read.value === 'v2' ? null : await t.state(reader).catch(() => null);
    t.check('a follower read returns the value acknowledged before it', read.value === 'v2', { expected: 'v2', read, reader: brief(state) });
    const a = await kv.toRange(2, 'Put', { key: 'nut', value: 'after' });
    const b = await kv.toRange(3, 'Put', { key: 'x', value: 'v3' });
    t.check('both ranges take writes at the end', a.ok === true && b.ok === true, { a, b });
  },
};
