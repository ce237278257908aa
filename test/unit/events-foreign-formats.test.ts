import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { impliedEdges, VIA_LINK } from '../../src/core/events/edges';
import { detectFormat } from '../../src/core/events/detect';
import { loadTimeline } from '../../src/core/events/load';
import { tempDir, writeFiles } from '../support/bugset';
import { allEvents } from '../support/events-fixtures';

/** Inputs as other tools write them: old OTLP exporters, Jaeger's api/v3, ShiViz and log4j logs. */
describe('events: other tools\' variants of the formats', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir('ddbench-foreign-')));
  afterEach(() => t.dispose());
  const file = (name: string, text: string): string => {
    writeFiles(t.dir, { [name]: text });
    return path.join(t.dir, name);
  };

  describe('OTLP', () => {
    const service = (name: string) => ({ attributes: [{ key: 'service.name', value: { stringValue: name } }] });
    const span = (extra: Record<string, unknown>) => ({
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b174',
      name: 'GET /users',
      startTimeUnixNano: '1700000000000000000',
      endTimeUnixNano: '1700000000005000000',
      ...extra,
    });

    it('reads enums written by name (status.code "STATUS_CODE_ERROR", kind "SPAN_KIND_SERVER") instead of dropping the request', async () => {
      const request = { resourceSpans: [{ resource: service('api'), scopeSpans: [{ spans: [span({ kind: 'SPAN_KIND_SERVER', status: { code: 'STATUS_CODE_ERROR', message: 'boom' } }), span({ spanId: '0001020304050607', status: { code: 'STATUS_CODE_OK' } })] }] }] };
      const store = await loadTimeline([file('otel.jsonl', `${JSON.stringify(request)}\n`)]);
      assert.equal(store.badCount, 0);
      const [failed, ok] = allEvents(store);
      assert.equal(failed.level, 'error');
      assert.deepEqual(failed.fields, { 'span.kind': 'SERVER', 'status.message': 'boom' });
      assert.equal(ok.level, undefined);
    });

    it('skips a span with a wrongly typed field, not the whole request, and says which field', async () => {
      const request = { resourceSpans: [{ resource: service('api'), scopeSpans: [{ spans: [span({ status: { code: 2.5 } }), span({ spanId: '0001020304050607', name: 'query' })] }] }] };
      const store = await loadTimeline([file('otel.jsonl', `${JSON.stringify(request)}\n`)]);
      assert.deepEqual(
        allEvents(store).map((e) => e.msg),
        ['query'],
      );
      assert.equal(store.badCount, 1);
      assert.match(store.bad[0].error, /^1 span\(s\) or log record\(s\) that are not OTLP were skipped, the rest of the request read \(span\.status\.code: /);
    });

    it('reads the pre-0.15 instrumentationLibrarySpans / instrumentationLibraryLogs keys, and severityNumber by name', async () => {
      const request = {
        resourceSpans: [{ resource: service('api'), instrumentationLibrarySpans: [{ instrumentationLibrary: { name: 'io.opentelemetry.jdbc' }, spans: [span({})] }] }],
        resourceLogs: [{ resource: service('db'), instrumentationLibraryLogs: [{ instrumentationLibrary: { name: 'log4j' }, logRecords: [{ timeUnixNano: '1700000000001000000', severityNumber: 'SEVERITY_NUMBER_WARN2', body: { stringValue: 'slow' } }] }] }],
      };
      const f = file('old.json', JSON.stringify(request, null, 2));
      assert.equal(detectFormat(f, false), 'otlp');
      const store = await loadTimeline([f]);
      assert.equal(store.badCount, 0);
      assert.deepEqual(
        allEvents(store).map((e) => [e.node, e.kind, e.level, e.msg]),
        [
          ['api', 'span', undefined, 'GET /users'],
          ['db', 'log', 'warn', 'slow'],
        ],
      );
    });

    it('unwraps Jaeger api/v3 answers {"result": {...}}, line by line and pretty-printed', async () => {
      // Jaeger's api/v3 is grpc-gateway JSON: base64 ids and enums by name.
      const answer = { result: { resourceSpans: [{ resource: service('frontend'), scopeSpans: [{ scope: { name: 'jaeger' }, spans: [span({ traceId: 'W47/95gDgQPSabYzgT/GDA==', spanId: '7uGbfsPBsXQ=', kind: 'SPAN_KIND_CLIENT' })] }] }] } };
      for (const [name, text] of [
        ['jaeger.jsonl', `${JSON.stringify(answer)}\n`],
        ['jaeger.json', JSON.stringify(answer, null, 2)],
      ]) {
        const f = file(name, text);
        assert.equal(detectFormat(f, false), 'otlp', name);
        const store = await loadTimeline([f]);
        assert.equal(store.badCount, 0, name);
        const [e] = allEvents(store);
        assert.equal(e.node, 'frontend');
        assert.deepEqual(e.span, { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name: 'GET /users', end: 5000 });
      }
    });

    it('keeps span links as a field of the span', async () => {
      const links = [{ traceId: 'AAECAwQFBgcICQoLDA0ODw==', spanId: '0001020304050607', attributes: [{ key: 'messaging.batch', value: { intValue: '2' } }] }, { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'EEE19B7EC3C1B174' }];
      const request = { resourceSpans: [{ resource: service('worker'), scopeSpans: [{ spans: [span({ spanId: '1111111111111111', name: 'process batch', links })] }] }] };
      const store = await loadTimeline([file('links.jsonl', `${JSON.stringify(request)}\n`)]);
      const [e] = allEvents(store);
      assert.deepEqual(e.fields, {
        links: [
          { traceId: '000102030405060708090a0b0c0d0e0f', spanId: '0001020304050607', attributes: { 'messaging.batch': 2 } },
          { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174' },
        ],
      });
    });

    it('draws an arrow for a span link from the linked span to the span that links it, across services', async () => {
      const producer = span({ spanId: '2222222222222222', name: 'publish' });
      const consumer = span({ spanId: '3333333333333333', name: 'process batch', links: [{ traceId: '5b8efff798038103d269b633813fc60c', spanId: '2222222222222222' }, { traceId: 'ffffffffffffffffffffffffffffffff', spanId: '9999999999999999' }] });
      const request = {
        resourceSpans: [
          { resource: service('producer'), scopeSpans: [{ spans: [producer] }] },
          { resource: service('consumer'), scopeSpans: [{ spans: [consumer] }] },
        ],
      };
      const store = await loadTimeline([file('linked.jsonl', `${JSON.stringify(request)}\n`)]);
      const edges = impliedEdges(store);
      assert.equal(edges.size, 1, 'a link to a span not in the data draws nothing');
      assert.deepEqual([store.nodeName(edges.from[0]), store.nodeName(edges.to[0]), edges.via[0]], ['producer', 'consumer', VIA_LINK]);
    });
  });

  describe('time in text logs', () => {
    it('takes a ShiViz date group as the time when it reads as one, and keeps it a field otherwise', async () => {
      // The regex of ShiViz's own example logs (date, host, clock, event).
      const regex = '(?<date>\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d+|\\S+) (?<host>\\S+) (?<clock>\\{.*?\\}) (?<event>.*)';
      const f = file('shiviz.log', ['2014-05-16 14:50:37.000100 client {"client":1} send', '2014-05-16 14:50:37.250307 server {"client":1,"server":1} receive'].join('\n'));
      const store = await loadTimeline([f], { regex });
      assert.equal(store.badCount, 0);
      const [send, receive] = allEvents(store);
      assert.equal(receive.ts - send.ts, 250_207, 'microseconds past the millisecond are kept');
      assert.equal(send.fields, undefined);
      // A bare number is no date (Date.parse would take "7" for a year): the events keep their order as time.
      const other = await loadTimeline([file('other.log', ['tuesday client {"client":1} send', '7 server {"client":1,"server":1} receive'].join('\n'))], { regex });
      assert.deepEqual(
        allEvents(other).map((e) => [e.ts, e.fields]),
        [
          [1, { date: 'tuesday' }],
          [2, { date: '7' }],
        ],
      );
    });

    it('reads a log4j time with a comma before the milliseconds', async () => {
      const regex = '^(?<time>\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d,\\d{3}) (?<level>\\w+) \\[(?<host>[^\\]]+)\\] (?<event>.*)$';
      const f = file('app.log', ['2024-01-02 10:11:12,345 INFO [n1] started', '2024-01-02 10:11:13,005 ERROR [n2] crashed'].join('\n'));
      const store = await loadTimeline([f], { regex });
      assert.equal(store.badCount, 0);
      const [a, b] = allEvents(store);
      assert.equal(b.ts - a.ts, 660_000);
      assert.equal(store.epochOriginUs, Date.parse('2024-01-02 10:11:12.345') * 1000);
    });
  });
});
