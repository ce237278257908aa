import { strict as assert } from 'node:assert';
import { faultProfile, tierOf } from '../../src/core/bugs/fault-profile';
import type { Event } from '../../src/core/events/event';

type Ev = Pick<Event, 'kind' | 'node' | 'msg' | 'fields'>;
const linkFault = (fields: Record<string, unknown>): Ev => ({ kind: 'fault', node: 'harness', msg: 'link fault', fields: { from: 'n1', to: '*', ...fields } as Event['fields'] });

describe('fault profile and tier of a run', () => {
  it('takes the harness-injected faults, and not the router drops they cause', () => {
    const events: Ev[] = [
      { kind: 'proc', node: 'n1', msg: 'start', fields: {} },
      linkFault({ type: 'Append', drop: 1 }),
      linkFault({ delayMs: [10, 50] }),
      { kind: 'fault', node: 'router', msg: 'drop', fields: { reason: 'rule' } },
      { kind: 'fault', node: 'n2', msg: 'clock skew', fields: { offsetMs: 500 } },
    ];
    assert.deepEqual(faultProfile(events), ['drop', 'delay', 'skew']);
    assert.equal(tierOf(faultProfile(events)), 1);
  });

  it('counts a link fault dropping every message of every type as cutting the node off', () => {
    assert.deepEqual(faultProfile([linkFault({ drop: 1 })]), ['isolate']);
    assert.equal(tierOf(['isolate', 'drop']), 2);
  });

  it('gives tier 2 for one kind of node-level fault and 3 for two or more', () => {
    assert.equal(tierOf(faultProfile([{ kind: 'proc', node: 'n1', msg: 'kill', fields: {} }, { kind: 'proc', node: 'n1', msg: 'restart', fields: {} }])), 2);
    assert.equal(tierOf(['partition', 'isolate']), 2, 'a partition and isolating link faults are one kind');
    assert.equal(tierOf(['partition', 'crash']), 3);
    assert.equal(tierOf(['crash', 'pause', 'drop']), 3);
    assert.equal(tierOf([]), 1);
  });
});
