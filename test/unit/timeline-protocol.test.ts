import * as assert from 'node:assert/strict';
import { TimelineModel } from '../../src/core/timeline/model';
import { timelinePage } from '../../src/core/timeline/page';
import { DEFAULT_UI_STATE, migrateUiState, PROTOCOL_VERSION, ToHost, ToWebview, type ToWebview as Msg } from '../../src/core/timeline/protocol';
import { TimelineSession } from '../../src/core/timeline/session';
import { clampRange, fitRange, formatTime, panBy, ticks, zoomAt } from '../../media/timeline/viewport';
import { faultyRun, runOf } from '../support/timeline-fixtures';

function session(): { sent: Msg[]; logged: string[]; opened: string[]; s: TimelineSession } {
  const sent: Msg[] = [];
  const logged: string[] = [];
  const opened: string[] = [];
  const model = new TimelineModel([runOf(faultyRun())], { title: 't', capabilities: { openSource: true, compare: false } });
  const s = new TimelineSession(model, (m) => sent.push(ToWebview.parse(m)), {
    openSource: (event) => void opened.push(`${event.src?.file}:${event.src?.line}`),
    log: (m) => logged.push(m),
  });
  return { sent, logged, opened, s };
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

describe('timeline protocol', () => {
  it('accepts the messages of both directions and rejects malformed ones', () => {
    assert.ok(ToHost.safeParse({ type: 'ready', protocol: PROTOCOL_VERSION }).success);
    assert.ok(ToHost.safeParse({ type: 'window', reqId: 1, axis: 'time', width: 800, filter: {} }).success, 'hiddenLanes defaults');
    assert.ok(!ToHost.safeParse({ type: 'window', reqId: 1, axis: 'sideways', width: 800, filter: {} }).success);
    assert.ok(!ToHost.safeParse({ type: 'window', axis: 'time', width: 800, filter: {} }).success, 'a request needs its id');
    assert.ok(!ToHost.safeParse({ type: 'details', reqId: 2, ref: { run: 26, index: 0 } }).success, 'at most 26 runs (A to Z)');
    assert.ok(!ToHost.safeParse({ type: 'search', reqId: 3, axis: 'time', filter: {}, query: '', regex: false, from: 0, dir: 1 }).success, 'an empty search');
    assert.ok(!ToHost.safeParse({ type: 'launch-missiles' }).success);
  });

  it('checks bulk window data as typed arrays (a plain array is not accepted)', () => {
    const { sent, s } = session();
    s.receive({ type: 'ready', protocol: PROTOCOL_VERSION });
    s.receive({ type: 'window', reqId: 4, axis: 'time', width: 64, filter: { hiddenLanes: [] } });
    const w = sent.find((m) => m.type === 'windowData');
    assert.ok(w !== undefined && w.type === 'windowData');
    assert.ok(w.count instanceof Uint32Array);
    assert.ok(!ToWebview.safeParse({ ...w, count: Array.from(w.count) }).success);
  });

  it('sends nothing before `ready`, then the metadata; clock diagnostics when asked', async () => {
    const { sent, s } = session();
    s.receive({ type: 'window', reqId: 1, axis: 'time', width: 10, filter: { hiddenLanes: [] } });
    s.update();
    await tick();
    assert.equal(sent.length, 0, 'a webview still loading would lose these');
    s.receive({ type: 'ready', protocol: PROTOCOL_VERSION });
    assert.equal(sent[0]?.type, 'meta');
    s.receive({ type: 'diagnostics', reqId: 3 });
    const diag = sent[1];
    assert.ok(diag?.type === 'diagnosticsData' && diag.runs[0].clockIssueCount === 0);
    s.update();
    const update = sent[2];
    assert.ok(update?.type === 'meta' && update.reason === 'update');
  });

  it('answers a failing request with an error that names it, and logs messages outside the protocol', () => {
    const { sent, logged, s } = session();
    s.receive({ type: 'ready', protocol: PROTOCOL_VERSION });
    s.receive({ type: 'details', reqId: 9, ref: { run: 1, index: 0 } });
    const err = sent.find((m) => m.type === 'error');
    assert.ok(err?.type === 'error' && err.reqId === 9 && /no event 0 in run 1/.test(err.message));
    s.receive({ type: 'window', reqId: 'x' });
    assert.equal(logged.length, 1);
    assert.match(logged[0], /not in the protocol/);
  });

  it('refuses a webview of another protocol version', () => {
    const { sent, s } = session();
    s.receive({ type: 'ready', protocol: PROTOCOL_VERSION + 1 });
    assert.equal(sent[0]?.type, 'error');
  });

  it('hands "open source" to the host with the event it names', async () => {
    const { opened, s } = session();
    s.receive({ type: 'ready', protocol: PROTOCOL_VERSION });
    const model = new TimelineModel([runOf(faultyRun())], { title: 't' });
    let index = -1;
    for (let i = 0; i < faultyRun().length; i++) if (model.eventAt({ run: 0, index: i }).event.src !== undefined) index = i;
    s.receive({ type: 'openSource', ref: { run: 0, index } });
    await tick();
    assert.deepEqual(opened, ['src/server.js:37']);
  });

  it('restores a persisted UI state, and falls back to defaults for another version or a damaged blob', () => {
    const saved = { ...DEFAULT_UI_STATE, axis: 'causal' as const, view: { time: [1, 2] as [number, number], causal: null }, inputs: [['/a/events.jsonl']] };
    assert.deepEqual(migrateUiState(JSON.parse(JSON.stringify(saved))), saved);
    assert.deepEqual(migrateUiState({ ...saved, v: 2 }), DEFAULT_UI_STATE);
    assert.deepEqual(migrateUiState('garbage'), DEFAULT_UI_STATE);
    assert.deepEqual(migrateUiState(undefined), DEFAULT_UI_STATE);
  });

  it('writes a page whose only script is the nonce\'d one, and escapes what would end a script block', () => {
    const html = timelinePage({ title: '<x>', nonce: 'N0nce', cspSource: 'vscode-resource:', script: { inline: 'let s = "</script><b>";' }, style: { href: 'style.css' }, data: [{ id: 'd', type: 'application/json', text: '{"a":"</script>"}' }] });
    assert.match(html, /script-src 'nonce-N0nce';/);
    assert.match(html, /default-src 'none'/);
    assert.ok(!/unsafe-inline|unsafe-eval/.test(html));
    assert.equal((html.match(/<\/script>/g) ?? []).length, 2, 'one closing tag per block, none from the content');
    assert.match(html, /<title>&#60;x&#62;<\/title>/);
  });
});

describe('timeline viewport', () => {
  const extent = [0, 1000] as const;

  it('zooms around the anchor and keeps the view inside the (padded) extent', () => {
    assert.deepEqual(zoomAt([0, 1000], 0.5, 0.5, extent, 'time'), [250, 750]);
    const atLeft = zoomAt([0, 1000], 0.5, 0, extent, 'time');
    assert.deepEqual(atLeft, [0, 500]);
    const [lo, hi] = fitRange(extent);
    assert.deepEqual(zoomAt([0, 1000], 4, 0.5, extent, 'time'), [lo, hi], 'never wider than everything');
    assert.equal(clampRange([100, 100.5], extent, 'time')[1] - 100, 10, 'never narrower than 10 µs');
  });

  it('pans by a fraction of the view and stops at the ends', () => {
    assert.deepEqual(panBy([100, 200], 0.5, extent, 'time'), [150, 250]);
    const [, hi] = fitRange(extent);
    assert.equal(panBy([900, 1000], 5, extent, 'time')[1], hi);
  });

  it('places ticks on a 1-2-5 step and formats times with the precision the step needs', () => {
    const t = ticks([0, 1_000_000], 1000, 100);
    assert.equal(t.step, 100_000);
    assert.equal(t.values.length, 11);
    assert.equal(formatTime(2_500_000, 500_000), '2.5 s');
    assert.equal(formatTime(1_500, 100), '1.5 ms');
    assert.equal(formatTime(15, 1), '15 µs');
    assert.equal(formatTime(8_193_604, 1), '8.193604 s');
  });
});
