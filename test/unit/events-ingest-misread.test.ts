import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { detectFormat } from '../../src/core/events/detect';
import { loadTimeline } from '../../src/core/events/load';
import { UserError } from '../../src/core/errors';
import { TimelineModel } from '../../src/core/timeline/model';
import { loadExecutions } from '../../src/core/timeline/runs';
import { tempDir, writeFiles } from '../support/bugset';

/** A bracketed-timestamp text log, the kind whose first byte looks like a JSON array. */
const BRACKETED = ['[2024-05-01 12:00:00.001] n1 {"n1":1} sent Ping', '[2024-05-01 12:00:00.004] n2 {"n1":1,"n2":1} got Ping', ''].join('\n');
const BRACKETED_REGEX = '^\\[(?<time>[^\\]]+)\\] (?<host>\\S+) (?<clock>\\{.*?\\}) (?<event>.*)$';

/** A ShiViz log with its header and two executions (delimiter lines with a trace label). */
const SHIVIZ_TWO = [
  '(?<event>.*)\\n(?<host>\\S*) (?<clock>{.*})',
  '^=== (?<trace>.*) ===$',
  '=== first ===',
  'start',
  'a {"a":1}',
  '=== second ===',
  'hello',
  'b {"b":1}',
  'reply',
  'a {"a":1,"b":1}',
  '',
].join('\n');

describe('events: misread and empty inputs', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir('ddbench-misread-')));
  afterEach(() => t.dispose());
  const file = (name: string, text: string): string => {
    writeFiles(t.dir, { [name]: text });
    return path.join(t.dir, name);
  };
  /** The UserError loading rejects with, its message matched against every pattern. */
  const rejects = async (load: Promise<unknown>, ...patterns: RegExp[]): Promise<void> => {
    await assert.rejects(load, (err: unknown) => {
      assert.ok(err instanceof UserError, `a UserError, not ${String(err)}`);
      for (const p of patterns) assert.match(err.message, p);
      return true;
    });
  };

  it('reads a log whose lines start with [ as text when a regex is given, never as a Chrome trace', async () => {
    const f = file('app.log', BRACKETED);
    assert.equal(detectFormat(f, true), 'text');
    const store = await loadTimeline([f], { regex: BRACKETED_REGEX });
    assert.equal(store.size, 2);
    assert.deepEqual([store.event(0).node, store.event(1).node], ['n1', 'n2']);
    assert.deepEqual(store.event(1).vc, { n1: 1, n2: 1 });
    assert.equal(store.event(1).ts - store.event(0).ts, 3000, 'dates in brackets are times');
    assert.equal(store.sources[0].format, 'text');
  });

  it('reads a log starting with { as text when a regex is given, and keeps a ShiViz header file a ShiViz log', () => {
    assert.equal(detectFormat(file('obj.log', '{"n1":1} n1 start\n'), true), 'text');
    assert.equal(detectFormat(file('s.log', SHIVIZ_TWO), true), 'shiviz');
  });

  it('without a regex, a bracketed log read as a Chrome trace is an error that names the format and suggests a regex', async () => {
    const f = file('app.log', BRACKETED);
    await rejects(loadTimeline([f]), /read as a Chrome trace: no events/, /give a regex \(--regex '/);
  });

  it('a Chrome trace with events loads; one whose events are all unusable is an error', async () => {
    const good = file('trace.json', JSON.stringify({ traceEvents: [{ name: 'req', ph: 'X', ts: 0, dur: 5, pid: 1, tid: 1 }] }));
    assert.equal((await loadTimeline([good])).size, 1);
    const none = file('none.json', JSON.stringify({ traceEvents: [] }));
    await rejects(loadTimeline([none]), /none\.json: read as a Chrome trace: no events/);
  });

  it('OTLP JSON with no spans or logs is an error that says what OTLP needs', async () => {
    const f = file('otel.json', `${JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans: [] }] }] })}\n`);
    await rejects(loadTimeline([f]), /read as OTLP JSON: no events/, /resourceSpans or resourceLogs/);
  });

  it('events JSONL with only bad lines is an error that shows a bad line and what else to try', async () => {
    const f = file('events.jsonl', '{"hello":1}\n{"also":"not an event"}\n');
    await rejects(loadTimeline([f]), /read as DDBench events JSONL: no events \(2 unreadable, e\.g\. line 1: /, /--format/);
  });

  it('a text log the regex matches nowhere is an error that says to check the regex', async () => {
    const f = file('app.log', 'nothing like the regex\n');
    await rejects(loadTimeline([f], { regex: '^(?<host>n\\d+): (?<event>.*)$' }), /read as a plain-text log: no events \(1 unreadable/, /check that the regex/);
  });

  it('an empty file stays an empty timeline (a live run that has not logged yet)', async () => {
    const store = await loadTimeline([file('events.jsonl', '')]);
    assert.equal(store.size, 0);
  });

  describe('choosing an execution of a ShiViz log', () => {
    it('by its 1-based number or its label', async () => {
      const f = file('s.log', SHIVIZ_TWO);
      const second = await loadTimeline([f], { execution: 2 });
      assert.deepEqual([...Array(second.size).keys()].map((i) => second.event(i).msg), ['hello', 'reply']);
      const byLabel = await loadTimeline([f], { execution: 'second' });
      assert.equal(byLabel.size, 2);
      const first = await loadTimeline([f]);
      assert.deepEqual([...Array(first.size).keys()].map((i) => first.event(i).msg), ['start']);
    });

    it('out of range or an unknown label is an error that lists the executions there are', async () => {
      const f = file('s.log', SHIVIZ_TWO);
      await rejects(loadTimeline([f], { execution: 3 }), /no execution 3 \(numbers start at 1\)/, /holds 2: 1 \(first\), 2 \(second\)/);
      await rejects(loadTimeline([f], { execution: 0 }), /no execution 0/);
      await rejects(loadTimeline([f], { execution: 'third' }), /no execution labelled "third"/, /1 \(first\), 2 \(second\)/);
    });

    it('shows executions side by side, each run labelled with its execution, and lists the executions', async () => {
      const f = file('s.log', SHIVIZ_TWO);
      assert.deepEqual((await loadTimeline([f])).sources[0].executions, ['first', 'second']);
      const runs = await loadExecutions([f], {}, [1, 'second']);
      assert.deepEqual(
        runs.map((r) => [r.label, r.store.size]),
        [
          ['s.log · first', 1],
          ['s.log · second', 2],
        ],
      );
      const meta = new TimelineModel(runs, { title: 't' }).meta();
      assert.equal(meta.runs.length, 2);
      assert.equal(new TimelineModel(await loadExecutions([f], {}, [1, 2, 2]), { title: 't' }).meta().runs.length, 3, 'more than two side by side');
      await rejects(loadExecutions([f], {}, []), /show 1 to 26 executions side by side; 0 were asked for/);
    });

    it('a log without a delimiter is one execution', async () => {
      const f = file('one.log', 'start\na {"a":1}\n');
      assert.equal((await loadTimeline([f], { execution: 1 })).size, 1);
      await rejects(loadTimeline([f], { execution: 2 }), /holds 1: 1 \(without a delimiter the log is one execution\)/);
    });
  });
});
