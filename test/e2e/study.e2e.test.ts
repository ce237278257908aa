// End to end: a person's study attempt in a real VS Code (code-server, headless
// Chromium) on a real bug: consent, participant code, the timer, an edit in the editor,
// Submit Fix verified for real, the record and interaction log on disk, then the
// reference comparison and the comparison view. Needs `npm run setup:e2e`; skipped without it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { openWorkspace } from '../../src/core/bugs/workspace';
import { loadRecords } from '../../src/core/study/collect';
import { consentHash } from '../../src/core/study/participant';
import { workspaceRecordsDir } from '../../src/core/study/store';
import { prepareSuite, pickQuickItem, runCommand, UI_TIMEOUT, webviewFrame, Workbench } from '../support/workbench';

const root = path.resolve(__dirname, '..', '..');
const artifacts = path.join(root, 'test-artifacts', 'e2e-study');
const BUG = 'raftkv-lock-double-grant';
/** A live verification of a RaftKV fix (one reproducer trial, regression trials, simulated seeds) on a loaded machine. */
const VERIFY_TIMEOUT = 8 * 60_000;
const CONSENT = 'E2E study: your attempt at this bug is recorded under a participant code.';
const CODE = 'P-E2E07';
const FIX = "      if (!this.kv.get(w.key)) {\n        this.rt.log.info('lock lost', { name: w.name, key: w.key, rev: w.rev });\n        w.done({ ok: false, error: 'session expired' });\n        continue;\n      }\n";
const ANCHOR = '      this.waiters.splice(this.waiters.indexOf(w), 1);\n';

describe('e2e: a study attempt in the editor (code-server + headless Chromium)', function () {
  this.timeout(20 * 60_000);
  let tmp: string | undefined;
  let ws: string;
  let wb: Workbench | undefined;
  let page: Page;
  const screenshot = async (name: string): Promise<void> => wb?.screenshot(name);

  before(async function () {
    tmp = prepareSuite(this, artifacts, 'ddbench-e2e-study-');
    ws = await openWorkspace(await loadCatalog(path.join(root, 'bugs')), BUG, path.join(tmp, 'ws'));
    wb = await Workbench.start({
      tmp,
      artifacts,
      settings: { 'ddbench.reproducer.trials': 1, 'ddbench.study.consentText': CONSENT, 'ddbench.study.timeLimitMinutes': 30 },
      folder: ws,
      viewport: { width: 1500, height: 950 },
    });
    page = wb.page;
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

  it('starts with consent and a participant code, logs an edit, and records a verified submission', async () => {
    await runCommand(page, 'DDBench: Start Attempt…');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.getByText(CONSENT).waitFor({ timeout: UI_TIMEOUT });
    await screenshot('consent');
    await dialog.getByRole('button', { name: 'I Agree', exact: true }).click();
    await pickQuickItem(page, 'Enter the code the study gave me…');
    const input = page.locator('.quick-input-widget input.input');
    await input.fill('Alice');
    await page.locator('.quick-input-widget', { hasText: 'at least one digit' }).waitFor({ timeout: UI_TIMEOUT });
    await input.fill(CODE);
    await page.keyboard.press('Enter');
    const timer = page.locator('.part.statusbar', { hasText: /\d\d:\d\d left/ });
    await timer.waitFor({ timeout: UI_TIMEOUT });
    await screenshot('started');

    // The fix goes in on disk; the person opens the file and types in it, which the log sees (sizes only).
    const file = path.join(ws, 'src', 'v3lock.js');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(ANCHOR, ANCHOR + FIX));
    await page.keyboard.press('Control+P');
    await page.locator('.quick-input-widget input.input').fill('v3lock.js');
    await pickQuickItem(page, 'v3lock.js');
    await page.locator('.tabs-container .tab', { hasText: 'v3lock.js' }).waitFor({ timeout: UI_TIMEOUT });
    await page.locator('.editor-instance .view-lines').first().click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('\n// fixed during the study');

    await runCommand(page, 'DDBench: Submit Fix');
    await page.getByText(`DDBench: verified — ${BUG} is fixed. Your attempt is recorded.`, { exact: true }).waitFor({ timeout: VERIFY_TIMEOUT });
    await timer.waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    await screenshot('verified');

    const set = loadRecords([workspaceRecordsDir(ws)]);
    assert.deepEqual(set.problems, []);
    assert.equal(set.attempts.length, 1);
    const a = set.attempts[0]!;
    assert.equal(a.status, 'verified');
    assert.ok(a.actor.kind === 'human');
    assert.equal(a.actor.participant, CODE);
    assert.deepEqual(a.actor.consent && [a.actor.consent.textSha256, a.actor.consent.interactionLog], [consentHash(CONSENT), true]);
    assert.equal(a.timeLimitMs, 30 * 60_000);
    assert.deepEqual([a.attempts, a.verifications.length, a.verifications[0]?.verified], [1, 1, true]);
    assert.ok(a.timeToFixMs !== undefined && a.timeToFixMs > 0);
    assert.match(a.patch?.diff ?? '', /session expired/);
    assert.match(a.patch?.diff ?? '', /\/\/ fixed during the study/, 'the editor was saved before the diff was taken');
    const events = set.interactions.filter((i) => i.attemptId === a.id).map((i) => i.event);
    assert.ok(events.some((e) => e.kind === 'file-open' && e.path === 'src/v3lock.js'), JSON.stringify(events));
    assert.ok(events.some((e) => e.kind === 'edit' && e.path === 'src/v3lock.js' && e.inserted > 0));
    assert.ok(events.some((e) => e.kind === 'command' && e.command === 'submitAttempt'));
    assert.ok(events.some((e) => e.kind === 'submit' && e.verified));
    assert.ok(!fs.readFileSync(path.join(workspaceRecordsDir(ws), 'attempts.jsonl'), 'utf8').includes('"// fixed during the study"'), 'edit content is not logged');
  });

  it('after the attempt, shows the reference fix beside the final code, and the comparison view', async () => {
    await runCommand(page, 'DDBench: Compare My Fix with the Reference');
    await page.locator('.tabs-container .tab', { hasText: 'v3lock.js: reference fix ↔ your fix' }).waitFor({ timeout: UI_TIMEOUT });
    await screenshot('reference-diff');

    await runCommand(page, 'DDBench: Show Attempt Comparison');
    const view = await comparisonFrame(page);
    await view.getByText('1 finished attempt(s) from 1 file(s)').waitFor({ timeout: UI_TIMEOUT });
    assert.match(await view.locator('table.grid').first().innerText(), /people\s+100% \(1\/1\)/);
    assert.equal(await view.locator('svg[role="img"]').count() > 0, true, 'charts are drawn');
    await wb!.docScreenshot('comparison', { maximized: true });
  });
});

/** The comparison view's frame. */
function comparisonFrame(page: Page): Promise<Frame> {
  return webviewFrame(page, 'the comparison view', '#app .ddbench-report');
}
