import { strict as assert } from 'node:assert';
import { cancelOnSignals, Interrupted, SIGNAL_EXIT_CODE, wasInterrupted } from '../../src/core/interrupt';

describe('interrupt: SIGINT and SIGTERM as a cancellation', () => {
  const exit = process.exit;
  let exits: (number | string | null | undefined)[];
  beforeEach(() => {
    exits = [];
    // A second signal exits; recorded here instead.
    process.exit = ((code?: number | string | null) => void exits.push(code)) as typeof process.exit;
  });
  afterEach(() => (process.exit = exit));

  it('the first signal aborts with an Interrupted reason naming it; a second exits at once with 128 + its number', () => {
    const seen: string[] = [];
    const cancel = cancelOnSignals((by) => seen.push(by));
    try {
      process.emit('SIGTERM');
      assert.ok(cancel.signal.aborted && cancel.signal.reason instanceof Interrupted);
      assert.deepEqual([cancel.received(), seen, exits, wasInterrupted(cancel.signal)], ['SIGTERM', ['SIGTERM'], [], true]);
      process.emit('SIGINT');
      assert.deepEqual(exits, [SIGNAL_EXIT_CODE.SIGINT]);
      assert.deepEqual(SIGNAL_EXIT_CODE, { SIGINT: 130, SIGTERM: 143 });
    } finally {
      cancel.dispose();
    }
    assert.equal(process.listenerCount('SIGINT') + process.listenerCount('SIGTERM'), 0, 'dispose left a listener');
  });

  it('a stop that is not an interrupt is not taken for one', () => {
    const c = new AbortController();
    assert.equal(wasInterrupted(c.signal), false);
    c.abort(new Error('the stop button'));
    assert.equal(wasInterrupted(c.signal), false);
  });
});
