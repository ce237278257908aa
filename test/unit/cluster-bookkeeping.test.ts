// The bookkeeping live and simulated clusters share: client names, node lists, and
// the fault path every message takes through a router (here on a hand-driven clock).
import assert from 'node:assert/strict';
import { ClientRegistry } from '../../src/core/cluster/client-registry';
import { checkClusterMembers } from '../../src/core/cluster/endpoint-names';
import { FaultPath, type FaultAction } from '../../src/core/cluster/fault-path';
import { FaultTable } from '../../src/core/cluster/fault-table';
import { applyRules, type MessageKey } from '../../src/core/cluster/link-faults';

describe('cluster bookkeeping', () => {
  it('gives each opening of a client name its own message-id prefix, and refuses taken or bad names', () => {
    const clients = new ClientRegistry<{ close(): void }>(['n1', 'n2']);
    assert.equal(clients.reserve('c'), 'c');
    assert.throws(() => clients.reserve('c'), /a client named c is already open/);
    assert.throws(() => clients.reserve('n1'), /client name n1 is a node id/);
    assert.throws(() => clients.reserve('harness'), /reserved for the timeline/);
    assert.throws(() => clients.reserve('a b'), /must use only letters/);
    let closed = 0;
    clients.opened('c', { close: () => (closed++, clients.release('c')) });
    clients.closeAll();
    assert.equal(closed, 1);
    assert.equal(clients.get('c'), undefined);
    assert.equal(clients.reserve('c'), 'c#1');
  });

  it('checks a node list: not empty, valid and distinct ids, an integer seed', () => {
    assert.doesNotThrow(() => checkClusterMembers(['n1', 'n2'], 7));
    assert.throws(() => checkClusterMembers([], 1), /at least one node/);
    assert.throws(() => checkClusterMembers(['n1'], 1.5), /seed must be an integer/);
    assert.throws(() => checkClusterMembers(['n1', 'n1'], 1), /node id n1 is listed twice/);
    assert.throws(() => checkClusterMembers(['router'], 1), /reserved for the timeline/);
  });

  describe('the fault path', () => {
    const msg = (n: number, type = 'x'): MessageKey => ({ msgId: `a:${n}`, from: 'a', to: 'b', type });
    /** A path whose rules always fire, on a clock the test advances by hand. */
    function rig() {
      const faults = new FaultTable();
      const timers: Array<{ at: number; fn: () => void; cancelled: boolean }> = [];
      const delivered: string[] = [];
      const actions: string[] = [];
      let now = 0;
      const path = new FaultPath<MessageKey>({
        faults,
        decide: (m, rules) => applyRules(rules, m, () => ({ chance: (_, p) => p > 0, delayMs: (min) => min })),
        after: (ms, fn) => {
          const timer = { at: now + ms, fn, cancelled: false };
          timers.push(timer);
          return { cancel: () => (timer.cancelled = true) };
        },
        deliver: (m, copies) => delivered.push(`${m.msgId}x${copies}`),
        fault: (action: FaultAction, m, fields) => actions.push(`${action} ${m.msgId} ${JSON.stringify(fields)}`),
        reorderHoldMs: 500,
      });
      const advance = (ms: number) => {
        now += ms;
        for (const t of timers.filter((t) => !t.cancelled && t.at <= now)) {
          t.cancelled = true;
          t.fn();
        }
      };
      return { faults, path, delivered, actions, advance };
    }

    it('drops what the partition cuts before any rule looks at it', () => {
      const { faults, path, delivered, actions } = rig();
      faults.partition([['a'], ['b']]);
      faults.addLinkFault({ from: '*', to: '*', duplicate: 1 });
      path.send(msg(1));
      assert.deepEqual(delivered, []);
      assert.deepEqual(actions, ['drop a:1 {"reason":"partition"}']);
    });

    it('duplicates, delays, and swaps a reordered message with the next one on its link', () => {
      const { faults, path, delivered, actions, advance } = rig();
      faults.addLinkFault({ from: 'a', to: 'b', type: 'dup', duplicate: 1 });
      faults.addLinkFault({ from: 'a', to: 'b', type: 'slow', delayMs: [300, 300] });
      faults.addLinkFault({ from: 'a', to: 'b', type: 'late', reorder: 1 });
      path.send(msg(1, 'dup'));
      path.send(msg(2, 'slow'));
      path.send(msg(3, 'late'));
      path.send(msg(4));
      assert.deepEqual(delivered, ['a:1x2', 'a:4x1', 'a:3x1']);
      advance(300);
      assert.deepEqual(delivered, ['a:1x2', 'a:4x1', 'a:3x1', 'a:2x1']);
      assert.deepEqual(actions.map((a) => a.split(' {')[0]), ['duplicate a:1', 'delay a:2', 'reorder a:3']);
    });

    it('releases a held message after the hold time, and forgets held ones when dropped', () => {
      const { faults, path, delivered, advance } = rig();
      faults.addLinkFault({ from: 'a', to: 'b', reorder: 1 });
      path.send(msg(1));
      advance(499);
      assert.deepEqual(delivered, []);
      advance(1);
      assert.deepEqual(delivered, ['a:1x1']);
      path.send(msg(2));
      path.dropHeld();
      advance(1000);
      assert.deepEqual(delivered, ['a:1x1']);
    });
  });
});
