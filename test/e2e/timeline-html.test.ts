// The HTML export of a real reproducer run, opened offline in headless Chromium: the
// page must show the run's lanes, message arrows (with the router's drops) and fault
// periods, and answer selection, navigation and the causal axis. Screenshots go to
// test-artifacts/timeline/.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import type { TimelineHook } from '../../media/timeline/app';
import { closeBrowser, launchBrowser, chromiumPath, type HeadlessBrowser } from '../support/workbench';

const root = path.resolve(__dirname, '..', '..');
const cli = path.join(root, 'bin', 'ddbench.js');
const artifacts = path.join(root, 'test-artifacts', 'timeline');
const BUG = 'raftkv-lock-double-grant';

function ddbench(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 200_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Expected {
  lanes: string[];
  arrows: number;
  dropped: number;
  /** Arrows of messages the router recorded no fault for: at most the plain arrows, which are never merged when drawn. */
  plain: number;
  bands: number;
  violations: number;
}

/** What the page should show, counted straight from the trial's events.jsonl. */
function expectedFrom(eventsFile: string): Expected {
  const events = fs
    .readFileSync(eventsFile, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { node: string; kind: string; msg?: string; msgId?: string; fields?: Record<string, unknown> });
  const sent = new Set(events.filter((e) => e.kind === 'send').map((e) => e.msgId));
  const dropped = events.filter((e) => e.node === 'router' && e.kind === 'fault' && e.msg === 'drop' && sent.has(e.msgId)).length;
  const openers = new Set(['partition', 'link fault', 'pause', 'kill']);
  const flagged = new Set(events.filter((e) => e.node === 'router' && e.kind === 'fault').map((e) => e.msgId));
  const received = events.filter((e) => e.kind === 'recv' && sent.has(e.msgId));
  // The router's own records (beside the events) also give a delivery whose receiver stopped before logging it.
  const receivedIds = new Set(received.map((e) => e.msgId));
  const routerFile = path.join(path.dirname(eventsFile), 'router.jsonl');
  const routerRecords = fs.existsSync(routerFile) ? fs.readFileSync(routerFile, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { action: string; msgId: string }) : [];
  const deliveredOnly = new Set(routerRecords.filter((r) => r.action === 'deliver' && sent.has(r.msgId) && !receivedIds.has(r.msgId)).map((r) => r.msgId));
  return {
    lanes: [...new Set(events.map((e) => e.node))].sort(),
    arrows: received.length + deliveredOnly.size + dropped,
    dropped,
    plain: received.filter((e) => !flagged.has(e.msgId)).length,
    bands: events.filter((e) => (e.kind === 'fault' || e.kind === 'proc') && openers.has(e.msg ?? '')).length,
    violations: events.filter((e) => e.kind === 'check' && e.fields?.ok === false).length,
  };
}

function hook(page: Page): Promise<Omit<TimelineHook, 'setView' | 'select' | 'idle' | 'drawNow' | 'paintedMs'>> {
  return page.evaluate(() => {
    const h = window.__ddbenchTimeline;
    if (h === undefined) throw new Error('no timeline hook');
    return { ready: h.ready, frames: h.frames, stats: h.stats, windowMs: h.windowMs, axis: h.axis, view: h.view, rows: h.rows, counts: h.counts, selection: h.selection, errors: h.errors };
  });
}

const idle = (page: Page): Promise<void> => page.evaluate(() => window.__ddbenchTimeline?.idle());

describe('timeline: HTML export of a real reproducer run in headless Chromium', function () {
  this.timeout(300_000);
  let dir: string;
  let html: string;
  let expected: Expected;
  let b: HeadlessBrowser | undefined;
  let page: Page;
  const problems: string[] = [];

  before(async function () {
    if (!fs.existsSync(chromiumPath())) {
      console.log(`      skipped: no Chromium at ${chromiumPath()} (apt-get install chromium)`);
      return this.skip();
    }
    assert.ok(fs.existsSync(path.join(root, 'dist', 'media', 'timeline-page.js')), 'build first (npm run build)');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-timeline-'));
    const ws = path.join(dir, 'ws');
    const opened = ddbench(['open', BUG, '--dir', ws]);
    assert.equal(opened.status, 0, opened.stderr);
    const repro = ddbench(['repro', ws, '--trials', '1', '--seed', '1', '--no-sim']);
    assert.ok(repro.status === 0 || repro.status === 1, `repro broke: ${repro.stderr}`);
    html = path.join(dir, 'timeline.html');
    const exported = ddbench(['timeline', ws, '--html', html]);
    assert.equal(exported.status, 0, exported.stderr);
    const trial = fs.readdirSync(path.join(ws, '.ddbench', 'runs')).map((run) => path.join(ws, '.ddbench', 'runs', run, fs.readdirSync(path.join(ws, '.ddbench', 'runs', run))[0]))[0];
    expected = expectedFrom(path.join(trial, 'events.jsonl'));
    fs.mkdirSync(artifacts, { recursive: true });
    b = await launchBrowser();
    page = await b.browser.newPage({ viewport: { width: 1600, height: 900 } });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('request', (r) => !/^(file|data|blob):/.test(r.url()) && problems.push(`network request: ${r.url()}`));
    await page.goto(`file://${html}`);
    await page.waitForFunction(() => window.__ddbenchTimeline?.ready === true, null, { timeout: 120_000 });
    await idle(page);
  });

  after(async () => {
    if (b !== undefined) await closeBrowser(b);
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('shows one lane per node, client, harness and router of the run', async () => {
    const h = await hook(page);
    assert.deepEqual([...h.rows].sort(), expected.lanes);
    assert.equal(h.rows[0], 'harness');
    assert.equal(h.counts.lanes, expected.lanes.length);
    assert.equal(h.stats?.rows, expected.lanes.length);
  });

  it('draws every message arrow, the dropped ones marked, and the fault periods and violations', async () => {
    const h = await hook(page);
    assert.ok(expected.dropped > 0, 'this bug drops lease keep-alives');
    assert.equal(h.counts.arrows, expected.arrows);
    assert.equal(h.counts.droppedArrows, expected.dropped);
    assert.equal(h.counts.faultBands, expected.bands);
    assert.equal(h.counts.violations, expected.violations);
    // The whole run is in view: the frame drew every arrow, but for the chatter (steady heartbeats) it shows as a
    // density band; flagged ones landing on the same pixels share one mark.
    const stats = h.stats;
    assert.ok(stats !== undefined);
    const plainDrawn = stats.arrows - stats.droppedArrows - stats.delayedArrows;
    assert.ok(plainDrawn + stats.chatter >= expected.plain && stats.arrows - stats.droppedArrows <= expected.arrows - expected.dropped, `${plainDrawn} plain of ${stats.arrows} arrows drawn, ${stats.chatter} chatter messages in the band`);
    assert.ok(stats.droppedArrows > 0 && stats.droppedArrows <= expected.dropped, `${stats.droppedArrows} dropped marks for ${expected.dropped} drops`);
    assert.equal(h.stats?.bands, expected.bands);
    assert.equal(h.stats?.violations, expected.violations);
    await page.screenshot({ path: path.join(artifacts, 'timeline-html.png') });
  });

  it('goes to the violation from the keyboard and shows its details and causal past', async () => {
    await page.focus('canvas[aria-roledescription="timeline"]');
    await page.keyboard.press('v');
    await page.waitForFunction(() => window.__ddbenchTimeline?.selection !== null);
    await idle(page);
    const h = await hook(page);
    assert.equal(h.selection?.node, 'harness');
    const details = await page.locator('aside.details').innerText();
    assert.match(details, /mutual exclusion/);
    assert.match(details, /happened before it/);
    await page.keyboard.press('z');
    await idle(page);
    await page.keyboard.press('c');
    await page.waitForFunction(() => window.__ddbenchTimeline?.axis === 'causal');
    await idle(page);
    const causal = await hook(page);
    assert.ok((causal.stats?.arrows ?? 0) > 0);
    assert.ok((causal.stats?.causalLanes ?? 0) > 0, 'the selection\'s causal past is shaded');
    await page.screenshot({ path: path.join(artifacts, 'timeline-html-causal.png') });
  });

  it('searches with next and previous, and filters by kind', async () => {
    await page.fill('input[type="search"]', 'LeaseKeepAlive');
    await page.press('input[type="search"]', 'Enter');
    await page.waitForFunction(() => /\d+ \/ \d+/.test(document.querySelector('.toolbar .count')?.textContent ?? ''));
    const first = (await hook(page)).selection;
    await page.press('input[type="search"]', 'Enter');
    await page.waitForFunction((id) => window.__ddbenchTimeline?.selection?.id !== id, first?.id);
    assert.match(await page.locator('aside.details').innerText(), /LeaseKeepAlive/);
    await page.locator('details.menu summary', { hasText: 'Kinds' }).click();
    await page.locator('details.menu label', { hasText: 'send' }).click();
    await page.locator('details.menu label', { hasText: 'recv' }).click();
    await idle(page);
    await page.waitForFunction(() => window.__ddbenchTimeline?.stats?.arrows === 0);
  });

  it('loads nothing from the network and breaks no content-security rule', () => {
    assert.deepEqual(problems, []);
  });
});

// Other people's files (test/fixtures/interop/): the page shows their lanes and draws the arrows their vector
// clocks, cross-service spans and flows give, with nothing from the network.
describe('timeline: HTML export of third-party logs and traces in headless Chromium', function () {
  this.timeout(300_000);
  const interop = path.join(root, 'test', 'fixtures', 'interop');
  const inputs = [
    { name: 'shiviz-chord', file: 'shiviz/chord.log', args: [] as string[], lanes: 8, arrows: 541 },
    { name: 'zipkin-yelp', file: 'zipkin/yelp.json', args: [], lanes: 6, arrows: 7 },
    { name: 'chrome-flow', file: 'chrome/flow_simple.json', args: [], lanes: 5, arrows: 3 },
    { name: 'jaeger-ui', file: 'jaeger/ui_01.json', args: [], lanes: 2, arrows: 2 },
    // Executions of ShiViz's comparison example side by side: each run's lanes, aligned by host.
    { name: 'shiviz-two-executions', file: 'shiviz/multiple-comparison.log', args: ['--execution', '1', '--execution', 'Different host from base'], lanes: 4, arrows: 8 },
    { name: 'shiviz-all-executions', file: 'shiviz/multiple-comparison.log', args: ['1', '2', '3', '4', '5'].flatMap((e) => ['--execution', e]), lanes: 10, arrows: 20 },
  ];
  let dir: string;
  let b: HeadlessBrowser | undefined;

  before(async function () {
    if (!fs.existsSync(chromiumPath())) return this.skip();
    assert.ok(fs.existsSync(path.join(root, 'dist', 'media', 'timeline-page.js')), 'build first (npm run build)');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-interop-html-'));
    fs.mkdirSync(artifacts, { recursive: true });
    b = await launchBrowser();
  });

  after(async () => {
    if (b !== undefined) await closeBrowser(b);
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const input of inputs) {
    it(`${input.file}: ${input.lanes} lanes and ${input.arrows} arrows drawn`, async () => {
      const html = path.join(dir, `${input.name}.html`);
      const exported = ddbench(['timeline', path.join(interop, input.file), ...input.args, '--html', html]);
      assert.equal(exported.status, 0, exported.stderr);
      const page = await b!.browser.newPage({ viewport: { width: 1400, height: 800 } });
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('request', (r) => !/^(file|data|blob):/.test(r.url()) && problems.push(`network request: ${r.url()}`));
      await page.goto(`file://${html}`);
      await page.waitForFunction(() => window.__ddbenchTimeline?.ready === true, null, { timeout: 120_000 });
      await idle(page);
      const h = await hook(page);
      assert.equal(h.rows.length, input.lanes);
      assert.equal(h.counts.arrows + h.counts.impliedArrows, input.arrows);
      assert.ok((h.stats?.arrows ?? 0) > 0, 'arrows are drawn in the first view');
      await page.screenshot({ path: path.join(artifacts, `timeline-interop-${input.name}.png`) });
      await page.close();
      assert.deepEqual(problems, []);
    });
  }
});
