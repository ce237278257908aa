// End to end: a person opens another tool's log in the editor's timeline (code-server +
// headless Chromium): ShiViz's multi-execution comparison example, picked through the
// file dialog, then two of its executions chosen to see side by side.
// Needs `npm run setup:e2e`; skipped without it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { ddbenchWebview, prepareSuite, runCommand, UI_TIMEOUT, waitUntil, Workbench } from '../support/workbench';

const root = path.resolve(__dirname, '..', '..');
const artifacts = path.join(root, 'test-artifacts', 'e2e-timeline-files');
const LOG = path.join(root, 'test', 'fixtures', 'interop', 'shiviz', 'multiple-comparison.log');

describe('e2e: the timeline of a multi-execution ShiViz log, two executions side by side', function () {
  this.timeout(10 * 60_000);
  let tmp: string | undefined;
  let wb: Workbench | undefined;
  let page: Page;

  before(async function () {
    tmp = prepareSuite(this, artifacts, 'ddbench-timeline-files-');
    const folder = path.join(tmp, 'logs');
    fs.mkdirSync(folder, { recursive: true });
    fs.copyFileSync(LOG, path.join(folder, path.basename(LOG)));
    wb = await Workbench.start({ tmp, artifacts, settings: {}, folder, viewport: { width: 1400, height: 900 } });
    page = wb.page;
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await wb?.screenshot(`failed-${this.currentTest.title.replace(/\W+/g, '-')}`);
  });

  after(async function () {
    this.timeout(60_000);
    await wb?.close();
    if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('opens the log from the file dialog, offers its executions, and shows the two picked aligned', async () => {
    await runCommand(page, 'DDBench: Show Timeline of Event or Log Files…');
    // code-server's own file dialog: a path box in the quick input.
    const box = page.locator('.quick-input-widget input.input');
    // The dialog replaces the command palette in the same widget: it is there once its box holds a folder path.
    await waitUntil('the file dialog', () => box.inputValue().catch(() => ''), (v) => v.startsWith('/'), UI_TIMEOUT);
    const file = path.join(tmp!, 'logs', path.basename(LOG));
    const title = page.locator('.quick-input-widget .quick-input-title', { hasText: 'holds 5 executions' });
    // The dialog completes paths as they are typed; on a busy machine an Enter can land before it settles, so the path is given again until the log opens.
    await waitUntil(
      'the log opened from the file dialog',
      async () => {
        if (await title.isVisible()) return true;
        if ((await box.inputValue().catch(() => '')) !== file) {
          await box.fill(file);
          await page.waitForTimeout(500);
        }
        await box.press('Enter').catch(() => undefined);
        await page.waitForTimeout(2_000);
        return title.isVisible();
      },
      (open) => open,
      UI_TIMEOUT,
    );
    // The first execution comes picked; pick the third too (its checkbox), and show.
    const rows = page.locator('.quick-input-widget .monaco-list-row');
    // A click on a row of a many-pick toggles its check box.
    await rows.filter({ hasText: 'Different host from base' }).first().click();
    await wb!.screenshot('executions-picked');
    await page.locator('.quick-input-widget input.input').press('Enter');
    const frame = ddbenchWebview(page);
    const hook = await waitUntil(
      'the two executions drawn',
      () => frame.locator('body').evaluate(() => {
        const h = window.__ddbenchTimeline;
        return h === undefined ? undefined : { ready: h.ready, rows: h.rows, counts: h.counts, errors: h.errors };
      }),
      (h) => h?.ready === true && h.rows.length > 0,
      UI_TIMEOUT,
    );
    assert.ok(hook);
    assert.deepEqual([...hook.rows].sort(), ['mountainView:A', 'paloAlto:A', 'paloAlto:B', 'seattle:B']);
    assert.equal(hook.counts.impliedArrows, 8, 'the arrows of both executions, from their vector clocks');
    assert.deepEqual(hook.errors, []);
    await wb!.screenshot('two-executions');
  });
});
