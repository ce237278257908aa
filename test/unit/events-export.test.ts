import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { exportStore, exportTimeline, summaryLines } from '../../src/core/events/export';
import { SHIVIZ_EXPORT_REGEX } from '../../src/core/events/formats/shiviz';
import { loadTimeline, resolveInputs } from '../../src/core/events/load';
import type { EventRecord } from '../../src/core/events/record';
import { tempDir } from '../support/bugset';
import { allEvents, exchange, withoutClocks, writeJsonl } from '../support/events-fixtures';

/** The fixture plus what real runs also hold: spans, faults, harness events, a lost message. */
function richRun(): EventRecord[] {
  return [
    ...exchange(),
    { id: 's1', ts: 41, node: 'n2', kind: 'span', msg: 'apply', span: { traceId: 'abc', spanId: 'x1', name: 'apply', end: 48.5 } },
    { id: 'h1', ts: 42, node: 'harness', kind: 'fault', level: 'warn', msg: 'partition', fields: { groups: [['n1'], ['n2', 'n3']] } },
    { id: 'x1', ts: 62, node: 'n3', kind: 'send', msg: 'Lost', msgId: 'm4', peer: 'n1 b', vc: { n1: 2, n2: 3, n3: 4 } },
    { id: 'c1', ts: 44.25, node: 'n1 b', kind: 'check', msg: 'multi\nline "quoted" }', fields: { ok: false } },
  ];
}

interface TraceEvent {
  ph: string;
  name: string;
  pid: number;
  tid: number;
  ts?: number;
  dur?: number;
  id?: number;
  bp?: string;
  args?: Record<string, unknown>;
}

describe('events: exports', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir('ddbench-export-')));
  afterEach(() => t.dispose());

  it('writes Chrome trace JSON that Perfetto reads: processes, instants, slices and message flows', async () => {
    const input = writeJsonl(t.dir, 'events.jsonl', richRun());
    const out = path.join(t.dir, 'trace.json');
    const summary = await exportTimeline([input], 'chrome', out);
    assert.equal(summary.events, 14);
    assert.equal(summary.flows, 3, 'm4 was never received: no dangling arrow');
    assert.ok(!fs.existsSync(`${out}.partial`));
    const doc = JSON.parse(fs.readFileSync(out, 'utf8')) as { traceEvents: TraceEvent[] };
    const events = doc.traceEvents;
    const names = events.filter((e) => e.ph === 'M' && e.name === 'process_name').map((e) => e.args?.name);
    assert.deepEqual(names, ['n3', 'n1', 'n2', 'harness', 'n1 b']);
    const byPhase = (ph: string) => events.filter((e) => e.ph === ph);
    assert.equal(byPhase('s').length, 3);
    assert.equal(byPhase('f').length, 3);
    assert.ok(byPhase('f').every((f) => f.bp === 'e' && typeof f.id === 'number'));
    const flowIds = (ph: string) => byPhase(ph).map((e) => e.id).sort();
    assert.deepEqual(flowIds('s'), flowIds('f'));
    const send = events.find((e) => e.ph === 'X' && e.args?.id === 'e2');
    assert.equal(send?.dur, 0);
    const flowStart = events[events.indexOf(send!) + 1];
    assert.equal(flowStart.ph, 's', 'the flow starts right after its slice, on the same thread');
    assert.equal(flowStart.tid, send?.tid);
    const span = events.find((e) => e.ph === 'X' && e.args?.id === 's1');
    assert.equal(span?.dur, 7.5);
    assert.notEqual(span?.tid, send?.tid, 'spans have their own thread');
    assert.equal(events.find((e) => e.args?.id === 'e1')?.ph, 'i');
  });

  it('reads its Chrome export back to the same events', async () => {
    const original = await loadTimeline([writeJsonl(t.dir, 'events.jsonl', richRun())]);
    const out = path.join(t.dir, 'trace.json');
    await exportStore(original, 'chrome', out);
    const back = await loadTimeline([out]);
    assert.equal(back.sources[0].format, 'chrome');
    assert.equal(back.badCount, 0);
    assert.deepEqual(allEvents(back), allEvents(original));
  });

  it('starts a Chrome export at the earliest event, not the first one read, and reads back the same times', async () => {
    const log = path.join(t.dir, 'app.log');
    fs.writeFileSync(log, ['2024-05-01T10:00:05Z n1 started', '2024-05-01T10:00:01Z n2 earlier', '2024-05-01T10:00:09Z n1 later'].join('\n'));
    const original = await loadTimeline([log], { regex: '^(?<time>\\S+) (?<host>\\S+) (?<event>.*)$' });
    assert.equal(original.ts[0], -4_000_000, 'time zero is the first line read');
    const out = path.join(t.dir, 'trace.json');
    await exportStore(original, 'chrome', out);
    const doc = JSON.parse(fs.readFileSync(out, 'utf8')) as { traceEvents: TraceEvent[] };
    const times = doc.traceEvents.filter((e) => e.ph !== 'M').map((e) => e.ts ?? 0);
    assert.equal(Math.min(...times), 0);
    assert.deepEqual(allEvents(await loadTimeline([out])).map((e) => e.ts), allEvents(original).map((e) => e.ts));
  });

  it('writes a ShiViz log whose clocks keep ShiViz rules, and reads it back to the same events', async () => {
    const original = await loadTimeline([writeJsonl(t.dir, 'events.jsonl', richRun())]);
    const out = path.join(t.dir, 'run.shiviz.log');
    const summary = await exportStore(original, 'shiviz', out);
    assert.equal(summary.clockIssueCount, 0, summary.clockIssues.map((i) => i.message).join('\n'));
    const text = fs.readFileSync(out, 'utf8');
    const [regexLine, delimiterLine] = text.split('\n');
    assert.equal(regexLine, SHIVIZ_EXPORT_REGEX);
    assert.equal(delimiterLine, '');
    // Parse the log the way ShiViz does: the regex over the whole log, global and multi-line.
    const log = text.split('\n').slice(2).join('\n').trim();
    const matches = [...log.matchAll(new RegExp(regexLine, 'gm'))];
    assert.equal(matches.length, original.size);
    const lastOwn = new Map<string, number>();
    for (const m of matches) {
      const host = m.groups!.host;
      const clock = JSON.parse(m.groups!.clock) as Record<string, number>;
      assert.equal(clock[host], (lastOwn.get(host) ?? 0) + 1, `${host}'s own counter goes 1, 2, 3, ...`);
      lastOwn.set(host, clock[host]);
      for (const [other, count] of Object.entries(clock)) assert.ok(other === host || count <= (lastOwn.get(other) ?? 0), 'no clock runs ahead of its host');
    }
    assert.ok(matches.some((m) => m.groups!.host === 'n1_b'), 'hosts have no spaces');
    const back = await loadTimeline([out]);
    assert.equal(back.sources[0].format, 'shiviz');
    assert.equal(back.badCount, 0);
    assert.deepEqual(allEvents(back), allEvents(original));
  });

  it('exports a run without clocks to ShiViz with clocks derived from message ids', async () => {
    const original = await loadTimeline([writeJsonl(t.dir, 'events.jsonl', withoutClocks(exchange()))]);
    const out = path.join(t.dir, 'derived.log');
    await exportStore(original, 'shiviz', out);
    const lines = fs.readFileSync(out, 'utf8').split('\n');
    const g3 = /^n3 (\{[^}]*\}) send /.exec(lines.find((l) => l.includes('"id":"g3"')) ?? '');
    assert.deepEqual(JSON.parse(g3?.[1] ?? '{}'), { n1: 2, n2: 3, n3: 3 });
    assert.deepEqual(allEvents(await loadTimeline([out])), allEvents(original));
  });

  it('takes a workspace to mean its latest run, with the router records, and summarises what it read', async () => {
    const ws = t.dir;
    const runs = path.join(ws, '.ddbench', 'runs');
    const old = writeJsonl(path.join(runs, 'repro-1', 'basic-0'), 'events.jsonl', exchange().slice(0, 2));
    fs.utimesSync(old, new Date(2000, 1, 1), new Date(2000, 1, 1));
    const latest = path.join(runs, 'up-2');
    writeJsonl(latest, 'events.jsonl', exchange());
    writeJsonl(latest, 'router.jsonl', [
      { ts: 65, action: 'deliver', msgId: 'm3', from: 'n3', to: 'n1', type: 'Done', copy: 1 },
      { ts: 65, action: 'deliver', msgId: 'm3', from: 'n3', to: 'n1', type: 'Done', copy: 2 },
    ]);
    fs.appendFileSync(path.join(latest, 'events.jsonl'), 'oops\n');
    assert.deepEqual(
      resolveInputs([ws]).map((i) => [path.relative(ws, i.file), i.format]),
      [
        [path.join('.ddbench', 'runs', 'up-2', 'events.jsonl'), 'events'],
        [path.join('.ddbench', 'runs', 'up-2', 'router.jsonl'), 'router'],
      ],
    );
    const out = path.join(t.dir, 'out.json');
    const summary = await exportTimeline([ws], 'chrome', out);
    assert.equal(summary.events, 11, 'the router adds the second copy of m3');
    assert.equal(summary.badCount, 1);
    const lines = summaryLines(summary).join('\n');
    assert.match(lines, /note: the latest run under .*up-2/);
    assert.match(lines, /bad line .*events\.jsonl:11: not JSON/);
    assert.match(lines, /wrote 11 events and 3 message arrows to .*out\.json \(open it in https:\/\/ui\.perfetto\.dev\)/);
  });

  it('refuses to export no events, and writes nothing', async () => {
    const empty = path.join(t.dir, 'events.jsonl');
    fs.writeFileSync(empty, '');
    const out = path.join(t.dir, 'trace.json');
    await assert.rejects(exportTimeline([empty], 'chrome', out), /nothing to export: .*events\.jsonl \(events\) hold no events; .*trace\.json was not written/);
    assert.ok(!fs.existsSync(out));
  });

  it('says what is wrong with an input that holds no run', async () => {
    fs.mkdirSync(path.join(t.dir, '.ddbench', 'runs'), { recursive: true });
    await assert.rejects(exportTimeline([t.dir], 'chrome', path.join(t.dir, 'x.json')), /has no runs yet: launch its cluster or run its reproducer first/);
    await assert.rejects(exportTimeline([path.join(t.dir, 'missing')], 'chrome', path.join(t.dir, 'x.json')), /does not exist/);
    assert.ok(!fs.existsSync(path.join(t.dir, 'x.json')));
  });
});
