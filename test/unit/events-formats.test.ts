import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { detectFormat } from '../../src/core/events/detect';
import { loadTimeline } from '../../src/core/events/load';
import { SHIVIZ_DEFAULT_REGEX } from '../../src/core/events/formats/text';
import { UserError } from '../../src/core/errors';
import { tempDir, writeFiles } from '../support/bugset';
import { allEvents, exchange, jsonl, writeJsonl } from '../support/events-fixtures';

describe('events: reading files', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir('ddbench-formats-')));
  afterEach(() => t.dispose());
  const file = (name: string, text: string): string => {
    writeFiles(t.dir, { [name]: text });
    return path.join(t.dir, name);
  };

  describe('events JSONL', () => {
    it('reads numbered events and the runtime raw lines without ids, in time order', async () => {
      const runtimeLine = { ts: 3, node: 'n2', kind: 'log', level: 'info', msg: 'raw', vc: { n2: 1 }, extra: 'ignored' };
      const f = file('events.jsonl', jsonl([{ id: '1', ts: 9, node: 'n1', kind: 'log', msg: 'numbered' }, runtimeLine]));
      const store = await loadTimeline([f]);
      assert.equal(store.size, 2);
      assert.deepEqual(store.event(0), { id: 'events.jsonl:2', ts: 3, node: 'n2', kind: 'log', level: 'info', msg: 'raw', vc: { n2: 1 } });
      assert.equal(store.event(1).id, '1');
      assert.deepEqual(store.origin(0), { file: f, line: 2 });
      assert.equal(store.badCount, 0);
    });

    it('counts bad lines with their line numbers and what was expected, and keeps the rest', async () => {
      const f = file(
        'events.jsonl',
        [
          JSON.stringify({ ts: 1, node: 'n1', kind: 'log', msg: 'ok' }),
          '',
          'panic: not json at all',
          JSON.stringify({ ts: 2, node: 'n1', msg: 'no kind' }),
          JSON.stringify({ ts: 3, node: 'n1', kind: 'log', level: 'loud' }),
          JSON.stringify({ ts: 4, node: 'n1', kind: 'send', vc: { n1: -1 } }),
          '[1,2]',
          JSON.stringify({ ts: 5, node: 'n1', kind: 'log', msg: 'still read' }),
        ].join('\r\n'),
      );
      const store = await loadTimeline([f]);
      assert.equal(store.size, 2);
      assert.equal(store.badCount, 5);
      assert.deepEqual(
        store.bad.map((b) => b.line),
        [3, 4, 5, 6, 7],
      );
      const why = store.bad.map((b) => b.error);
      assert.match(why[0], /^not JSON .*expected one event object per line/);
      assert.match(why[1], /kind is missing/);
      assert.match(why[1], /expected an object like \{"ts":1200,"node":"n1","kind":"log"/);
      assert.match(why[2], /level: Invalid option: expected one of "debug"\|"info"\|"warn"\|"error"/);
      assert.match(why[3], /vc\.n1/);
      assert.match(why[4], /got an array/);
      assert.equal(store.sources[0].bad, 5);
      assert.equal(store.event(1).msg, 'still read');
    });

    it('reads lines longer than a read chunk and files without a final newline', async () => {
      const long = { ts: 1, node: 'n1', kind: 'log', msg: 'x'.repeat(3 << 20) };
      const f = file('events.jsonl', `${JSON.stringify(long)}\n${JSON.stringify({ ts: 2, node: 'n1', kind: 'log', msg: 'ünïcode ✓' })}`);
      const store = await loadTimeline([f]);
      assert.equal(store.size, 2);
      assert.equal(store.event(0).msg?.length, 3 << 20);
      assert.equal(store.event(1).msg, 'ünïcode ✓');
    });
  });

  describe('router records', () => {
    const records = [
      { ts: 10, action: 'recv', msgId: 'n1:1', from: 'n1', to: 'n2', type: 'Append', body: { i: 1 }, vc: { n1: 1 } },
      { ts: 11, action: 'deliver', msgId: 'n1:1', from: 'n1', to: 'n2', type: 'Append' },
      { ts: 12, action: 'recv', msgId: 'c:1', from: 'client', to: 'n1', type: 'Put', body: {} },
      { ts: 13, action: 'drop', msgId: 'c:1', from: 'client', to: 'n1', type: 'Put', reason: 'partition' },
    ];

    it('turns router steps into sends, receives and faults', async () => {
      const store = await loadTimeline([writeJsonl(t.dir, 'router.jsonl', records)]);
      const events = allEvents(store);
      assert.deepEqual(
        events.map((e) => [e.node, e.kind, e.msgId, e.peer]),
        [
          ['n1', 'send', 'n1:1', 'n2'],
          ['n2', 'recv', 'n1:1', 'n1'],
          ['client', 'send', 'c:1', 'n1'],
          ['router', 'fault', 'c:1', 'n1'],
        ],
      );
      assert.deepEqual(events[0].vc, { n1: 1 });
      assert.deepEqual(events[3].fields, { from: 'client', to: 'n1', type: 'Put', reason: 'partition' });
      assert.equal(events[3].level, 'warn');
      assert.deepEqual(store.partners(0), [1]);
    });

    it('in a run folder, adds only the steps events.jsonl lacks', async () => {
      const run = path.join(t.dir, 'run');
      writeJsonl(run, 'events.jsonl', [
        { id: '1', ts: 9, node: 'n1', kind: 'send', msg: 'Append', msgId: 'n1:1', peer: 'n2', vc: { n1: 1 } },
        { id: '2', ts: 13, node: 'router', kind: 'fault', level: 'warn', msg: 'drop', msgId: 'c:1', peer: 'n1', fields: { from: 'client', to: 'n1', type: 'Put', reason: 'partition' } },
      ]);
      writeJsonl(run, 'router.jsonl', records);
      const store = await loadTimeline([run]);
      const router = store.sources.find((s) => s.format === 'router');
      assert.equal(router?.duplicates, 2);
      assert.equal(router?.events, 2);
      assert.deepEqual(
        allEvents(store).map((e) => `${e.node} ${e.kind} ${e.msgId}`),
        ['n1 send n1:1', 'n2 recv n1:1', 'client send c:1', 'router fault c:1'],
      );
    });

    it('reads router files after event files whatever order they are given in', async () => {
      const router = writeJsonl(t.dir, 'router.jsonl', records.slice(0, 2));
      const events = writeJsonl(t.dir, 'events.jsonl', [{ ts: 9, node: 'n1', kind: 'send', msg: 'Append', msgId: 'n1:1', peer: 'n2' }]);
      const store = await loadTimeline([router, events]);
      assert.deepEqual(store.sources.map((s) => [s.format, s.events, s.duplicates]), [
        ['events', 1, 0],
        ['router', 1, 1],
      ]);
    });

    it('reports a record that is not a router step', async () => {
      const store = await loadTimeline([file('router.jsonl', `${JSON.stringify({ ts: 1, action: 'teleport', msgId: 'x', from: 'a', to: 'b', type: 't' })}\n`)]);
      assert.equal(store.badCount, 1);
      assert.match(store.bad[0].error, /^not a router record \(action: .*expected \{"ts":…,"action":"recv\|deliver/);
    });
  });

  describe('plain-text logs through a regex', () => {
    const regex = '^(?<time>\\S+) (?<level>[A-Z]+) \\[(?<host>[^\\]]+)\\] (?<clock>\\{[^}]*\\}) (?<event>.*?)(?: term=(?<term>\\d+))?$';

    it('maps the named groups to events, other groups to fields, dates to timeline time', async () => {
      const f = file(
        'app.log',
        [
          '2024-05-01T10:00:00.000Z INFO [n1] {"n1":1} started term=3',
          '2024-05-01T10:00:00.250Z WARNING [n2] {"n2":1} slow',
          'garbage in the middle',
          '2024-05-01T10:00:01.000Z ERROR [n2] {"n2":2,"n1":1} crashed',
          '2024-05-01T10:00:02.000Z INFO [n3] {n3:1} bad clock',
        ].join('\n'),
      );
      const store = await loadTimeline([f], { regex });
      assert.equal(store.size, 3);
      const [a, b, c] = allEvents(store);
      assert.deepEqual(a, { id: 'app.log:1', ts: 0, node: 'n1', kind: 'log', level: 'info', msg: 'started', vc: { n1: 1 }, fields: { term: '3' } });
      assert.equal(b.ts, 250_000);
      assert.equal(b.level, 'warn');
      assert.equal(c.level, 'error');
      assert.equal(store.epochOriginUs, Date.parse('2024-05-01T10:00:00.000Z') * 1000);
      // A line no record covers is skipped as ShiViz skips it, and named in a note; a record that matched but cannot be read is bad.
      assert.deepEqual(
        store.bad.map((x) => x.line),
        [5],
      );
      assert.match(store.bad[0].error, /the clock "\{n3:1\}" is not JSON .*expected an object of counters like \{"n1":3,"n2":1\}/);
      assert.match(store.sources[0].notes.join('\n'), /1 line\(s\) matched no record and were skipped, as ShiViz skips them; the first, line 3, does not match the log regex .* line: "garbage in the middle"/);
    });

    it('refuses a regex without the groups it needs, saying which', async () => {
      const f = file('app.log', 'x\n');
      await assert.rejects(loadTimeline([f], { regex: '(?<node>\\S+) (?<event>.*)' }), (err: Error) => {
        assert.ok(err instanceof UserError);
        assert.match(err.message, /needs the named groups host \(the node\) and event \(the message\); host is missing/);
        assert.match(err.message, /it has node, event/);
        return true;
      });
      await assert.rejects(loadTimeline([f], { regex: '(?<host>' }), /not a valid JavaScript regular expression/);
      await assert.rejects(loadTimeline([f], { regex: SHIVIZ_DEFAULT_REGEX, delimiter: '(' }), /the execution delimiter "\(" is not a valid/);
    });

    it('reads ShiViz logs with the default two-line format, detected without a regex', async () => {
      const f = file('run.log', ['client sends request', 'client {"client":1}', 'server handles it', 'server {"client":1, "server":1}', 'orphan line'].join('\n'));
      assert.equal(detectFormat(f, false), 'shiviz');
      const store = await loadTimeline([f]);
      assert.deepEqual(
        allEvents(store).map((e) => [e.node, e.msg, e.vc]),
        [
          ['client', 'client sends request', { client: 1 }],
          ['server', 'server handles it', { client: 1, server: 1 }],
        ],
      );
      assert.equal(store.badCount, 0);
      assert.match(store.sources[0].notes.join('\n'), /the first, line 5, does not match the log regex \(a record is 2 lines\)/);
    });

    it('finds a record after stray characters on its first line, as ShiViz does, and reports a log with no record as bad', async () => {
      const f = file('stray.log', ['.[10:00:01] n1 {"n1":1} started', '[10:00:02] n2 {"n2":1,"n1":1} joined'].join('\n'));
      const store = await loadTimeline([f], { regex: '\\[(?<date>[^\\]]+)\\] (?<host>\\S+) (?<clock>\\{.*\\}) (?<event>.*)' });
      assert.deepEqual(
        allEvents(store).map((e) => [e.node, e.msg]),
        [
          ['n1', 'started'],
          ['n2', 'joined'],
        ],
      );
      const none = file('none.log', 'banner\nmore banner\n');
      await assert.rejects(loadTimeline([none], { regex: '(?<host>n\\d) (?<event>.*)' }), /line 1: does not match the log regex/);
    });

    it('reads a ShiViz file with its regex and delimiter header, one execution at a time', async () => {
      const header = ['^(?<host>\\S+) (?<clock>\\{.*\\}) (?<event>.*)$', '^=== (?<trace>.*) ===$'];
      const f = file('multi.log', [...header, '=== first ===', 'a {"a":1} one', '=== second ===', 'b {"b":1} two', 'b {"b":2} three'].join('\n'));
      const first = await loadTimeline([f]);
      assert.deepEqual(allEvents(first).map((e) => e.msg), ['one']);
      assert.match(first.sources[0].notes.join(), /holds 2 execution\(s\): 1 \(first\), 2 \(second\)/);
      const second = await loadTimeline([f], { execution: 'second' });
      assert.deepEqual(allEvents(second).map((e) => e.msg), ['two', 'three']);
      assert.deepEqual((await loadTimeline([f], { execution: 2 })).size, 2);
    });

    it('exports ShiViz default regex', () => {
      assert.equal(SHIVIZ_DEFAULT_REGEX, '(?<event>.*)\\n(?<host>\\S*) (?<clock>{.*})');
    });
  });

  describe('OTLP JSON', () => {
    const traceLine = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'api' } }] },
          scopeSpans: [
            {
              scope: { name: 'tracer' },
              spans: [
                {
                  traceId: '5B8EFFF798038103D269B633813FC60C',
                  spanId: 'EEE19B7EC3C1B174',
                  name: 'GET /users',
                  kind: 2,
                  startTimeUnixNano: '1700000000000000000',
                  endTimeUnixNano: '1700000000005000000',
                  attributes: [
                    { key: 'http.status', value: { intValue: '500' } },
                    { key: 'tags', value: { arrayValue: { values: [{ stringValue: 'a' }, { boolValue: true }] } } },
                  ],
                  status: { code: 2, message: 'boom' },
                  events: [{ timeUnixNano: '1700000000001000000', name: 'exception', attributes: [{ key: 'type', value: { stringValue: 'E' } }] }],
                },
                {
                  traceId: 'W47/95gDgQPSabYzgT/GDA==',
                  spanId: 'AAECAwQFBgc=',
                  parentSpanId: 'eee19b7ec3c1b174',
                  name: 'query',
                  startTimeUnixNano: 1700000000002000000,
                  endTimeUnixNano: 1700000000003000000,
                },
              ],
            },
          ],
        },
      ],
    };
    const logLine = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'db' } }, { key: 'service.instance.id', value: { stringValue: 'db-2' } }] },
          scopeLogs: [{ logRecords: [{ timeUnixNano: '1700000000004000000', severityNumber: 13, body: { stringValue: 'slow query' }, traceId: '5b8efff798038103d269b633813fc60c', attributes: [{ key: 'ms', value: { doubleValue: 12.5 } }] }] }],
        },
      ],
    };

    it('reads spans and log records from collector file-exporter lines', async () => {
      const f = file('otel.jsonl', `${JSON.stringify(traceLine)}\n${JSON.stringify(logLine)}\n{"resourceSpans": 3}\n`);
      assert.equal(detectFormat(f, false), 'otlp');
      const store = await loadTimeline([f]);
      const [span, exception, child, log] = allEvents(store);
      assert.deepEqual(span, {
        id: 'otel.jsonl:1.1',
        ts: 0,
        node: 'api',
        kind: 'span',
        level: 'error',
        msg: 'GET /users',
        span: { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name: 'GET /users', end: 5000 },
        fields: { 'http.status': 500, tags: ['a', true], 'span.kind': 'SERVER', 'status.message': 'boom' },
      });
      assert.equal(exception.kind, 'log');
      assert.equal(exception.ts, 1000);
      assert.deepEqual(child.span, { traceId: '5b8efff798038103d269b633813fc60c', spanId: '0001020304050607', parentId: 'eee19b7ec3c1b174', name: 'query', end: 3000 });
      assert.deepEqual(log, {
        id: 'otel.jsonl:2',
        ts: 4000,
        node: 'db/db-2',
        kind: 'log',
        level: 'warn',
        msg: 'slow query',
        fields: { ms: 12.5, traceId: '5b8efff798038103d269b633813fc60c' },
      });
      assert.equal(store.epochOriginUs, 1700000000000000);
      assert.equal(store.badCount, 1);
      assert.equal(store.bad[0].line, 3);
      assert.match(store.bad[0].error, /not an OTLP export request \(resourceSpans: /);
      assert.equal(store.traceIds.length, 1, 'base64 and hex ids of one trace are one trace');
    });

    it('reads a pretty-printed request body', async () => {
      const f = file('request.json', JSON.stringify(traceLine, null, 2));
      assert.equal(detectFormat(f, false), 'otlp');
      const store = await loadTimeline([f]);
      assert.equal(store.size, 3);
      assert.equal(store.badCount, 0);
    });
  });

  describe('format detection', () => {
    it('tells formats apart by their first bytes and explains what to do otherwise', () => {
      assert.equal(detectFormat(writeJsonl(t.dir, 'a.jsonl', exchange()), false), 'events');
      assert.equal(detectFormat(writeJsonl(t.dir, 'r.jsonl', [{ ts: 1, action: 'recv', msgId: 'm', from: 'a', to: 'b', type: 't' }]), false), 'router');
      assert.equal(detectFormat(file('c.json', '{"traceEvents":[]}'), false), 'chrome');
      assert.equal(detectFormat(file('d.json', '[{"ph":"i"}]'), false), 'chrome');
      assert.equal(detectFormat(file('e.log', 'hello world\n'), true), 'text');
      assert.throws(() => detectFormat(file('f.log', 'hello world\nsecond line\n'), false), /cannot tell the format of f\.log.*give a regex with named groups host, event/);
    });

    it('honours a forced format', async () => {
      const f = file('events.txt', `${JSON.stringify({ ts: 1, node: 'n1', kind: 'log' })}\n`);
      assert.equal((await loadTimeline([f], { format: 'events' })).size, 1);
      fs.rmSync(f);
    });
  });
});
