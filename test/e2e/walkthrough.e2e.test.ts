// End to end: a new user walks the Get Started walkthrough in a real VS Code
// (code-server + headless Chromium), from the suggested bug to a verified fix.
// Needs `npm run setup:e2e`; skipped without it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { findBug, loadCatalog, type BugEntry } from '../../src/core/bugs/catalog';
import { materialiseBuggySource, referenceFix, resolveWorkspace } from '../../src/core/bugs/workspace';
import { applyUnifiedDiff } from '../../src/core/patch/unified';
import { readPractice } from '../../src/core/study/practice';
import { nextBug } from '../../src/core/study/progress';
import { collectTreeLabels, ddbenchWebview, editorText, focusView, pickQuickItem, prepareSuite, rowLabels, runCommand, sidebarPane, UI_TIMEOUT, waitForWorkbench, waitUntil, Workbench } from '../support/workbench';

const root = path.resolve(__dirname, '..', '..');
const artifacts = path.join(root, 'test-artifacts', 'e2e-walkthrough');
/** Reproducer runs and verifications take live trials and simulated seeds: give them room. */
const RUN_TIMEOUT = 5 * 60_000;

describe('e2e: the Get Started walkthrough, as a new user (code-server + headless Chromium)', function () {
  this.timeout(20 * 60_000);
  let tmp: string | undefined;
  let wb: Workbench | undefined;
  let page: Page;
  let bug: BugEntry;
  let ws: string;
  const shot = (name: string) => wb?.screenshot(name);

  const toast = (text: string | RegExp) => page.locator('.notifications-toasts .notification-list-item', { hasText: text }).first();
  /** Waits for a notification and clicks one of its buttons. */
  const clickToastAction = async (text: string | RegExp, action: string, timeout = UI_TIMEOUT) => {
    const t = toast(text);
    await t.waitFor({ timeout });
    await t.locator('.monaco-button', { hasText: action }).first().click();
  };
  const output = () => editorText(page.locator('.part.panel'));
  /** One quick input of a sequence: waits for its title, so an answer never lands in the previous one. */
  const step = async (title: string, answer: () => Promise<void>) => {
    await page.locator('.quick-input-widget .quick-input-title', { hasText: title }).waitFor({ timeout: UI_TIMEOUT });
    await answer();
  };
  const clearToasts = () => runCommand(page, 'Notifications: Clear All Notifications');

  before(async function () {
    tmp = prepareSuite(this, artifacts, 'ddbench-walkthrough-');
    const catalog = await loadCatalog(path.join(root, 'bugs'));
    bug = nextBug(catalog, new Map()) ?? assert.fail('the set suggests no bug');
    const workspacesDir = path.join(tmp, 'workspaces');
    ws = path.join(workspacesDir, bug.id);
    wb = await Workbench.start({ tmp, artifacts, settings: { 'ddbench.workspacesDir': workspacesDir, 'ddbench.reproducer.trials': 2 }, viewport: { width: 1400, height: 900 } });
    page = wb.page;
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await shot(`failed-${this.currentTest.title.replace(/\W+/g, '-')}`);
  });

  after(async function () {
    this.timeout(60_000);
    await wb?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('offers the walkthrough, whose first step opens the suggested tier-1 bug', async () => {
    assert.equal(bug.tier, 1);
    assert.ok(bug.manifest.starter, 'a newcomer is offered the starter bug');
    await runCommand(page, 'Welcome: Open Walkthrough...');
    await pickQuickItem(page, 'Get Started with DDBench');
    const open = page.locator('.gettingStartedContainer').getByRole('button', { name: 'Open the Suggested Bug' });
    await open.waitFor({ timeout: UI_TIMEOUT });
    // A plain picture: the step's page is a webview that keeps the keyboard, so the command palette a doc picture uses would not open.
    await shot('walkthrough');
    await open.click();
    await page.waitForURL(/[?&]folder=/, { timeout: UI_TIMEOUT });
    await waitForWorkbench(page);
    assert.ok(fs.existsSync(path.join(ws, '.ddbench', 'workspace.json')), `no workspace at ${ws}`);
    assert.ok(fs.existsSync(path.join(ws, '.git')), 'the workspace is a git repository');
    await page.locator('.tabs-container .tab', { hasText: 'ISSUE.md' }).first().waitFor({ timeout: UI_TIMEOUT });
    await shot('issue');
  });

  it('launches the cluster, sends a request from the console and adds a one-way delay', async () => {
    await runCommand(page, 'DDBench: Launch Cluster');
    await waitUntil('every node running', () => rowLabels(sidebarPane(page, 'Cluster')), (l) => ['n1', 'n2', 'n3'].every((n) => l.includes(`${n} running`)), UI_TIMEOUT);
    await runCommand(page, 'DDBench: Send a Request…');
    await page.locator('.quick-input-widget input.input').fill('n1 Status');
    await page.keyboard.press('Enter');
    await toast(/n1 Status → .*"role"/).waitFor({ timeout: UI_TIMEOUT });
    await shot('request-reply');
    await clearToasts();
    await runCommand(page, 'DDBench: Add Link Fault…');
    await step('Messages from which node?', () => pickQuickItem(page, 'n1'));
    await step('Messages from n1 to which node?', () => pickQuickItem(page, 'n2'));
    await step('Which direction?', () => pickQuickItem(page, 'One way'));
    await step('What happens to the messages?', () => pickQuickItem(page, 'Delay'));
    await step('Delay in ms', async () => {
      await page.locator('.quick-input-widget input.input').fill('1500');
      await page.keyboard.press('Enter');
    });
    await step('Only one message type?', () => page.keyboard.press('Enter'));
    await runCommand(page, 'Output: Show Output Channels...');
    await pickQuickItem(page, 'DDBench');
    await waitUntil('the link fault in Output › DDBench', output, (t) => t.includes('link fault: n1 → n2: delay 1500 ms'), UI_TIMEOUT);
  });

  it('shows the live timeline, then stops the cluster', async () => {
    await runCommand(page, 'DDBench: Show Timeline');
    await ddbenchWebview(page).locator('canvas[aria-roledescription="timeline"]').waitFor({ timeout: UI_TIMEOUT });
    await waitUntil('lanes drawn', () => ddbenchWebview(page).locator('body').evaluate(() => window.__ddbenchTimeline?.rows ?? []), (rows) => rows.includes('console'), UI_TIMEOUT);
    await shot('live-timeline');
    await runCommand(page, 'DDBench: Stop Cluster');
    await sidebarPane(page, 'Cluster').getByText('No cluster is running.').waitFor({ timeout: UI_TIMEOUT });
  });

  it('runs the reproducer, whose result opens the failing trial at the violation', async () => {
    await clearToasts();
    await runCommand(page, 'DDBench: Run Reproducer');
    // A live trial usually fails; if only simulated seeds did, the failing seed is replayed instead.
    const result = toast(/the bug reproduces \(/);
    await result.waitFor({ timeout: RUN_TIMEOUT });
    await result.locator('.monaco-button', { hasText: /Open Failing Trial|Replay Failing Seed/ }).first().click();
    const frame = ddbenchWebview(page);
    const hook = await waitUntil(
      'the failing trial with its violation selected',
      () => frame.locator('body').evaluate(() => window.__ddbenchTimeline && { ready: window.__ddbenchTimeline.ready, selection: window.__ddbenchTimeline.selection, violations: window.__ddbenchTimeline.counts.violations }),
      (h) => h?.ready === true && h.violations > 0 && h.selection?.node === 'harness',
      UI_TIMEOUT,
    );
    assert.ok(hook);
    await wb!.docScreenshot('failing-trial', { maximized: true });
  });

  it('takes two hints, one at a time, and the practice log records them', async () => {
    // The timeline webview has the keyboard: a click on the side bar's title gives it back to the workbench (F1).
    await page.locator('.part.sidebar .composite.title').first().click();
    await clearToasts();
    await runCommand(page, 'DDBench: Show Next Hint');
    await clickToastAction(/Hint 1 of \d \(where to look\)/, 'Next Hint');
    await toast(/Hint 2 of \d \(evidence\)/).waitFor({ timeout: UI_TIMEOUT });
    await shot('hint');
    assert.deepEqual(readPractice(ws).events.map((e) => (e.kind === 'hint' ? e.level : e.kind)), [1, 2]);
  });

  it('a wrong fix is not verified, and the result names the check that now fails', async () => {
    await clearToasts();
    const patch = fs.readFileSync(path.join(root, 'test', 'bugs', 'degenerate', bug.id, 'never-grant-waiters.patch'), 'utf8');
    applyUnifiedDiff(ws, patch.slice(patch.indexOf('--- ')), 'never-grant-waiters.patch');
    await runCommand(page, 'DDBench: Verify My Fix');
    const t = toast(/not verified — failed "/);
    await t.waitFor({ timeout: RUN_TIMEOUT });
    assert.match(await t.innerText(), /moved the failure|failed "/);
    await shot('wrong-fix');
  });

  it('the right fix is verified and the bug shows as solved', async () => {
    await clearToasts();
    const { system } = await resolveWorkspace(ws, await loadCatalog(path.join(root, 'bugs')));
    // Back to the bug's code, then the fix's idea (here: the reference fix itself).
    materialiseBuggySource(system, findBug(await loadCatalog(path.join(root, 'bugs')), bug.id), ws);
    applyUnifiedDiff(ws, referenceFix(bug), 'the fix');
    await runCommand(page, 'DDBench: Verify My Fix');
    await toast(/verified — your fix for .* passes/).waitFor({ timeout: RUN_TIMEOUT });
    await focusView(page, 'Bugs');
    // The tree shows only the rows in view: read them all, scrolling.
    const solved = await waitUntil('the bug marked solved', () => collectTreeLabels(page, sidebarPane(page, 'Bugs')), (l) => l.some((x) => x.startsWith(`${bug.id}:`) && /solved/.test(x)), UI_TIMEOUT);
    assert.ok(solved.some((x) => x.startsWith('Suggested next bug:') && !x.includes(bug.title)), 'the next suggestion moved on');
    // Grouped by tier and filtered to solved bugs, the picture shows the one just solved.
    await runCommand(page, 'DDBench: Group Bugs by System or Tier');
    await runCommand(page, 'DDBench: Filter Bugs…');
    await step('Show which bugs?', async () => {
      await pickQuickItem(page, 'solved');
      await page.keyboard.press('Enter');
    });
    await sidebarPane(page, 'Bugs').getByText(bug.title).first().waitFor({ timeout: UI_TIMEOUT });
    const shown = (await rowLabels(sidebarPane(page, 'Bugs'))).filter((l) => l.includes(': ') && !l.startsWith('Suggested next bug'));
    assert.deepEqual(shown.map((l) => l.split(':')[0]), [bug.id], 'only the solved bug is shown');
    await wb!.docScreenshot('bugs-solved');
  });
});
