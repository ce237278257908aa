import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { loadTimeline } from '../../src/core/events/load';
import { timeAxis } from '../../src/core/timeline/axis';
import { TimelineModel } from '../../src/core/timeline/model';
import type { HostReply } from '../../src/core/timeline/protocol';
import { tempDir, writeFiles } from '../support/bugset';

describe('timeline: the time extent includes span ends', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir('ddbench-extent-')));
  afterEach(() => t.dispose());

  it('a Chrome trace whose first span outlasts every later event is seen whole', async () => {
    // The request span runs 0..10 ms; everything else starts (and ends) before 2 ms.
    const trace = {
      traceEvents: [
        { name: 'request', ph: 'X', ts: 0, dur: 10_000, pid: 1, tid: 1 },
        { name: 'parse', ph: 'X', ts: 100, dur: 400, pid: 1, tid: 2 },
        { name: 'tick', ph: 'i', ts: 1_500, pid: 1, tid: 2, s: 't' },
      ],
    };
    writeFiles(t.dir, { 'trace.json': JSON.stringify(trace) });
    const store = await loadTimeline([path.join(t.dir, 'trace.json')]);
    assert.deepEqual(timeAxis(store).extent, [0, 10_000]);
    const model = new TimelineModel([{ store, label: 'trace', inputs: [] }], { title: 't' });
    const reply: HostReply = model.handle({ type: 'window', reqId: 1, axis: 'time', width: 100, filter: { hiddenLanes: [] } });
    assert.ok(reply.type === 'windowData');
    assert.deepEqual(reply.extent, [0, 10_000], 'the first view and Fit reach the span end');
  });

  it('without spans the extent is still first to last event', async () => {
    writeFiles(t.dir, { 'events.jsonl': [{ ts: 5, node: 'n1', kind: 'log' }, { ts: 42, node: 'n2', kind: 'log' }].map((r) => JSON.stringify(r)).join('\n') });
    const store = await loadTimeline([path.join(t.dir, 'events.jsonl')]);
    assert.deepEqual(timeAxis(store).extent, [5, 42]);
  });
});
