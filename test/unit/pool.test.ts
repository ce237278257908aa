import { strict as assert } from 'node:assert';
import { inPool } from '../../src/core/pool';

describe('pool: work over items, a few at a time', () => {
  it('keeps at most the limit running and gives the results in the items’ order', async () => {
    let running = 0;
    let most = 0;
    const out = await inPool([30, 10, 20, 0, 5], 2, async (ms, i) => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, ms));
      running--;
      return `${i}:${ms}`;
    });
    assert.deepEqual(out, ['0:30', '1:10', '2:20', '3:0', '4:5']);
    assert.equal(most, 2);
  });

  it('skips the items not yet started once aborted, and gives only the results of those that ran, in order', async () => {
    const abort = new AbortController();
    const out = await inPool(
      ['a', 'b', 'c', 'd'],
      1,
      async (item) => {
        if (item === 'b') abort.abort();
        return item.toUpperCase();
      },
      abort.signal,
    );
    assert.deepEqual(out, ['A', 'B']);
    for (const r of out) assert.equal(typeof r, 'string', 'no empty slot for a skipped item');
  });
});
