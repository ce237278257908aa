import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { RunRegistry } from '../../src/core/cluster/process-registry';
import { cancelOnSignals, Interrupted, SIGNAL_EXIT_CODE, wasInterrupted } from '../../src/core/interrupt';
import { isAlive } from '../../src/core/pid';
import { waitUntilGone } from '../support/processes';

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
    const listeners = () => process.listenerCount('SIGINT') + process.listenerCount('SIGTERM');
    const before = listeners();
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
    assert.equal(listeners(), before, 'dispose left a listener');
  });

  it('a stop that is not an interrupt is not taken for one', () => {
    const c = new AbortController();
    assert.equal(wasInterrupted(c.signal), false);
    c.abort(new Error('the stop button'));
    assert.equal(wasInterrupted(c.signal), false);
  });

  it("the process registry leaves the first signal to a cancellation: the run's nodes are not killed under it, nor the harness", async () => {
    const node = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const registry = new RunRegistry(`interrupt-test-${process.pid}`, '/nonexistent');
    registry.add(node.pid!);
    const cancel = cancelOnSignals();
    try {
      // Before, the registry killed every group and re-raised the signal, ending the harness before any cleanup.
      process.emit('SIGINT');
      assert.ok(cancel.signal.aborted);
      assert.ok(isAlive(node.pid!), 'the registry killed the nodes on the first signal');
    } finally {
      cancel.dispose();
      registry.killAllSync();
      registry.close();
    }
    await waitUntilGone(node.pid!);
  });
});
