// End to end: simulated seeds in a real VS Code (code-server, headless Chromium) on a
// raftkv-lock-double-grant workspace: Run Simulated Seeds over 20 seeds, the failing
// seeds listed in the Simulated Seeds view (the same seeds core/sim finds), Enter on one
// replays it into the timeline, which shows the failed check; any seed replays by number
// from the palette. Needs `npm run setup:e2e`; skipped without it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { openWorkspace } from '../../src/core/bugs/workspace';
import { replayWorkspaceSeed, simulateWorkspace } from '../../src/core/sim/workspace';
import {
  collectTreeLabels,
  ddbenchWebview,
  focusView,
  prepareSuite,
  pickQuickItem,
  reloadWindow,
  rowLabels,
  runCommand,
  sidebarPane,
  treeRows,
  UI_TIMEOUT,
  waitUntil,
  Workbench,
} from '../support/workbench';

const root = path.resolve(__dirname, '..', '..');
const artifacts = path.join(root, 'test-artifacts', 'e2e-sim');
const BUG = 'raftkv-lock-double-grant';
const SEEDS = 20;
/** 20 simulated seeds take seconds on a quiet machine; the machine running the suite may be far from quiet. */
const RUN_TIMEOUT = 5 * 60_000;

describe('e2e: simulated seeds in the editor (code-server + headless Chromium)', function () {
  this.timeout(20 * 60_000);
  let tmp: string | undefined;
  let ws: string;
  let wb: Workbench | undefined;
  let page: Page;
  let expectedFailing: number[];
  let scenario: string;
  const screenshot = async (name: string): Promise<void> => wb?.screenshot(name);
  const seedsPane = () => sidebarPane(page, 'Simulated Seeds');
  const timelineFrame = () => ddbenchWebview(page);
  const timelineHook = () =>
    timelineFrame()
      .locator('body')
      .evaluate(() => {
        const h = window.__ddbenchTimeline;
        return h === undefined ? undefined : { ready: h.ready, rows: h.rows, counts: h.counts, stats: h.stats, selection: h.selection, errors: h.errors };
      });

  before(async function () {
    tmp = prepareSuite(this, artifacts, 'ddbench-e2e-sim-');
    ws = await openWorkspace(await loadCatalog(path.join(root, 'bugs')), BUG, path.join(tmp, 'ws'));
    // What the editor must list: core/sim's own answer for the same seeds (no worker threads, so nothing is shared with the editor's run).
    const oracle = await simulateWorkspace(ws, { seeds: SEEDS, from: 1, concurrency: 1 });
    expectedFailing = oracle.failedSeeds;
    scenario = oracle.scenario;
    assert.ok(expectedFailing.length > 0, `the buggy ${BUG} fails some of seeds 1..${SEEDS} in simulation`);
    fs.rmSync(path.join(ws, '.ddbench', 'runs'), { recursive: true, force: true });

    wb = await Workbench.start({
      tmp,
      artifacts,
      settings: {},
      folder: ws,
      viewport: { width: 1500, height: 950 },
      checkInstalled: (dir) => assert.ok(fs.existsSync(path.join(dir, 'dist', 'sim-worker.js')), 'the VSIX ships the bundle the simulation workers run'),
    });
    page = wb.page;
    // The status bar item appears once the extension has activated, so its commands are known.
    await page.locator('.part.statusbar', { hasText: 'raftkv stopped' }).waitFor({ timeout: UI_TIMEOUT });
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await screenshot(`failed-${this.currentTest.title.replace(/\W+/g, '-')}`);
  });

  after(async function () {
    this.timeout(60_000);
    await wb?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('offers the run from the Simulated Seeds view before any seed has run', async () => {
    await focusView(page, 'Simulated Seeds');
    await seedsPane().getByRole('button', { name: 'Run Simulated Seeds', exact: true }).waitFor({ timeout: UI_TIMEOUT });
    await screenshot('seeds-welcome');
  });

  it(`runs ${SEEDS} seeds with progress and lists exactly the failing ones`, async () => {
    await runCommand(page, 'DDBench: Run Simulated Seeds…');
    const input = page.locator('.quick-input-widget input.input');
    await page.locator('.quick-input-widget', { hasText: 'Run Simulated Seeds' }).waitFor({ timeout: UI_TIMEOUT });
    // The box says what it takes, and refuses what it cannot read.
    await input.fill('twenty');
    await page.locator('.quick-input-widget', { hasText: 'type a number of seeds' }).waitFor({ timeout: UI_TIMEOUT });
    await input.fill(String(SEEDS));
    await input.press('Enter');

    const runRow = new RegExp(`^${SEEDS} seeds \\(1\\.\\.${SEEDS}\\): ${expectedFailing.length} failed`);
    await waitUntil('the finished run in the Simulated Seeds view', () => rowLabels(seedsPane()), (labels) => labels.some((l) => runRow.test(l)), RUN_TIMEOUT);
    await screenshot('seeds-listed');
    const labels = await collectTreeLabels(page, seedsPane());
    const listed = labels.map((l) => /^seed (\d+) fail/.exec(l)?.[1]).filter((s): s is string => s !== undefined).map(Number);
    assert.deepEqual(listed, expectedFailing, `rows: ${labels.join(' | ')}`);
    assert.ok(labels.some((l) => /^seed \d+ fail: invariant violated: mutual exclusion/.test(l)), 'each seed says why it failed');

    // The notification says the same, and offers to replay the first failing seed.
    await page.locator('.notifications-toasts .notification-list-item', { hasText: `${SEEDS} seeds (1..${SEEDS}): ${expectedFailing.length} failed` }).first().waitFor({ timeout: UI_TIMEOUT });
    await page.locator('.notifications-toasts .monaco-button', { hasText: `Replay Seed ${expectedFailing[0] ?? 1}` }).first().waitFor({ timeout: UI_TIMEOUT });
  });

  it('Enter on a failing seed replays it into the timeline, which shows the failure', async () => {
    const seed = expectedFailing[0] ?? 1;
    // Keyboard only: focus the list, the first row is the run, the next its first failing seed.
    await seedsPane().locator('.monaco-list').first().focus();
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowDown');
    await waitUntil('the first failing seed focused', () => seedsPane().locator('.monaco-list-row.focused').getAttribute('aria-label'), (l) => l?.startsWith(`seed ${seed} `) === true, UI_TIMEOUT);
    await page.keyboard.press('Enter');

    await page.locator('.tabs-container .tab.active', { hasText: `simulated seed ${seed}` }).waitFor({ timeout: RUN_TIMEOUT });
    const hook = await waitUntil('the replay drawn in the timeline', timelineHook, (h) => h?.ready === true && (h.stats?.rows ?? 0) > 0, UI_TIMEOUT);
    assert.ok(hook);
    for (const n of ['n1', 'n2', 'n3']) assert.ok(hook.rows.includes(n), `lane ${n} in ${hook.rows.join(', ')}`);
    assert.ok(hook.counts.violations > 0, 'the failed invariant is marked on the timeline');
    assert.deepEqual(hook.errors, []);
    assert.match(await page.locator('.tabs-container .tab.active').innerText(), new RegExp(`${scenario} · simulated seed ${seed} · fail: invariant violated: mutual exclusion`));

    // `v` goes to the violation: the failed check, its details on the side.
    await timelineFrame().locator('canvas[aria-roledescription="timeline"]').focus();
    await page.keyboard.press('v');
    await waitUntil('the violation selected', timelineHook, (h) => h?.selection != null, UI_TIMEOUT);
    await timelineFrame().locator('aside.details', { hasText: /mutual exclusion/ }).waitFor({ timeout: UI_TIMEOUT });
    await screenshot('seed-replayed');

    // The replay is core/sim's exact execution: the same bytes as replaying the seed without the editor.
    const written = path.join(ws, '.ddbench', 'runs', `replay-seed-${seed}`, 'events.jsonl');
    assert.ok(fs.existsSync(written), written);
    const again = await replayWorkspaceSeed(ws, { seed, out: path.join(tmp ?? os.tmpdir(), 'again', 'events.jsonl') });
    assert.ok(fs.readFileSync(written).equals(fs.readFileSync(again.eventsFile)), 'the editor replay differs from core/sim replay of the same seed');
  });

  it('replays any seed by number from the palette', async () => {
    const seed = expectedFailing[expectedFailing.length - 1] ?? SEEDS;
    await runCommand(page, 'DDBench: Replay Simulated Seed in Timeline…');
    const input = page.locator('.quick-input-widget input.input');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: `seed ${expectedFailing[0] ?? 1}` }).first().waitFor({ timeout: UI_TIMEOUT });
    await input.fill(String(seed));
    await pickQuickItem(page, `seed ${seed}`);
    await page.locator('.tabs-container .tab.active', { hasText: `simulated seed ${seed}` }).waitFor({ timeout: RUN_TIMEOUT });
    await waitUntil('the replay drawn in the timeline', timelineHook, (h) => h?.ready === true && h.counts.violations > 0, UI_TIMEOUT);
    await screenshot('seed-by-number');
  });

  it('keeps the list across a window reload', async () => {
    await reloadWindow(page);
    await page.locator('.part.statusbar', { hasText: 'raftkv stopped' }).waitFor({ timeout: UI_TIMEOUT });
    await focusView(page, 'Simulated Seeds');
    await waitUntil(
      'the kept run in the Simulated Seeds view',
      () => rowLabels(seedsPane()),
      (labels) => labels.some((l) => l.startsWith(`${SEEDS} seeds (1..${SEEDS}): ${expectedFailing.length} failed`)) && labels.some((l) => l.startsWith(`seed ${expectedFailing[0] ?? 1} `)),
      UI_TIMEOUT,
    );
    assert.ok((await treeRows(seedsPane()).count()) > 1);
  });
});
