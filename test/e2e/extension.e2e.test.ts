// End to end: the packaged VSIX in a real VS Code (code-server 4.100.3 → VS Code 1.100)
// driven through headless Chromium. Needs `npm run setup:e2e`; skipped without it.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import type { CodeServerDirs } from '../support/code-server';
import {
  collectTreeLabels,
  ddbenchWebview,
  editorText,
  focusView,
  prepareSuite,
  pickQuickItem,
  reloadWindow,
  rowLabels,
  runCommand,
  sidebarPane,
  treeRows,
  waitForWorkbench,
  UI_TIMEOUT,
  waitUntil,
  Workbench,
} from '../support/workbench';

const root = path.resolve(__dirname, '..', '..');
const artifacts = path.join(root, 'test-artifacts', 'e2e');

describe('e2e: DDBench in VS Code (code-server + headless Chromium)', function () {
  this.timeout(10 * 60_000);

  let tmp: string | undefined;
  let dirs: CodeServerDirs;
  let workspacesDir: string;
  let catalog: Catalog;
  let wb: Workbench | undefined;
  let page: Page;
  const screenshot = async (name: string): Promise<void> => wb?.screenshot(name);

  before(async function () {
    tmp = prepareSuite(this, artifacts, 'ddbench-e2e-');
    catalog = await loadCatalog(path.join(root, 'bugs'));
    workspacesDir = path.join(tmp, 'workspaces');
    wb = await Workbench.start({
      tmp,
      artifacts,
      // Two reproducer trials keep the reproducer step short; the count itself is not under test.
      settings: { 'ddbench.workspacesDir': workspacesDir, 'ddbench.reproducer.trials': 2 },
      viewport: { width: 1400, height: 900 },
      checkInstalled: (installed) => {
        for (const part of ['package.json', 'dist/extension.js', 'bugs']) {
          assert.ok(fs.existsSync(path.join(installed, part)), `the installed VSIX lacks ${part}`);
        }
      },
    });
    dirs = wb.dirs;
    page = wb.page;
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await screenshot(`failed-${this.currentTest.title.replace(/\W+/g, '-')}`);
  });

  after(async function () {
    this.timeout(60_000);
    await wb?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('activates: the DDBench activity-bar item shows the Bugs and Cluster views', async () => {
    await page.locator('.part.activitybar [aria-label="DDBench"]').first().click();
    const bugs = sidebarPane(page, 'Bugs');
    await bugs.waitFor({ timeout: UI_TIMEOUT });
    await sidebarPane(page, 'Cluster').waitFor({ timeout: UI_TIMEOUT });
    // Rows (or the empty-set welcome) come from the extension's tree provider, so they prove activation.
    if (catalog.bugs.length > 0) await treeRows(bugs).first().waitFor({ timeout: UI_TIMEOUT });
    else await bugs.getByText('No bugs found in the bug set.').waitFor({ timeout: UI_TIMEOUT });
    await screenshot('bugs-view');
  });

  it('lists every bug of the catalogue in the Bugs view', async function () {
    if (catalog.bugs.length === 0) this.skip();
    const labels = await collectTreeLabels(page, sidebarPane(page, 'Bugs'));
    const missing = catalog.bugs.filter((b) => !labels.some((l) => l.startsWith(`${b.id}:`))).map((b) => b.id);
    assert.deepEqual(missing, [], `bugs missing from the tree; rows seen: ${labels.join(' | ')}`);
    for (const system of catalog.systems) {
      if (system.kind === 'miniature' && catalog.bugs.some((b) => b.system === system.id)) assert.ok(labels.some((l) => l.startsWith(system.manifest.name)), system.id);
    }
    // The bugs in real upstream code are a group of their own, last.
    if (catalog.bugs.some((b) => b.kind === 'upstream')) assert.match(labels.filter((l) => !catalog.bugs.some((b) => l.startsWith(`${b.id}:`))).at(-1) ?? '', /^Real upstream code \(pilot\)/);
  });

  it('"DDBench: Open Bug" creates the bug workspace and opens it', async function () {
    const bug = e2eBug(catalog);
    if (!bug) return this.skip();
    await runCommand(page, 'DDBench: Open Bug');
    await page.locator('.quick-input-widget input.input').fill(bug.id);
    await pickQuickItem(page, bug.id);

    // The window reloads onto the new folder.
    await page.waitForURL(/[?&]folder=/, { timeout: UI_TIMEOUT });
    await waitForWorkbench(page);
    const dir = path.join(workspacesDir, bug.id);
    assert.ok(fs.existsSync(path.join(dir, '.ddbench', 'workspace.json')), `no workspace at ${dir}`);
    assert.ok(fs.existsSync(path.join(dir, 'ISSUE.md')));
    await page.waitForFunction((id) => document.title.includes(id), bug.id, { timeout: UI_TIMEOUT });

    // The issue report opens first, and the status bar knows the bug's system.
    await page.locator('.tabs-container .tab', { hasText: 'Preview ISSUE.md' }).waitFor({ timeout: UI_TIMEOUT });
    const firstLine = fs.readFileSync(path.join(dir, 'ISSUE.md'), 'utf8').split('\n').find((l) => l.trim() !== '') ?? '';
    const preview = page.frameLocator('iframe.webview').frameLocator('iframe#active-frame');
    await preview.getByText(firstLine.replace(/^#+\s*/, '').trim()).first().waitFor({ timeout: UI_TIMEOUT });
    await page.locator('.part.statusbar', { hasText: `${bug.system} stopped` }).waitFor({ timeout: UI_TIMEOUT });
    await page.keyboard.press('Control+Shift+E');
    await treeRows(page.locator('.part.sidebar .explorer-folders-view')).filter({ hasText: 'ISSUE.md' }).first().waitFor({ timeout: UI_TIMEOUT });
    await screenshot('bug-workspace');
    await focusView(page, 'Bugs');
    await wb!.docScreenshot('bugs-view');
  });

  describe('in the bug workspace', () => {
    let nodes: string[];
    let system: string;
    const clusterPane = () => sidebarPane(page, 'Cluster');
    const statusBarText = async () => (await page.locator('.part.statusbar').innerText()).replace(/\u00a0/g, ' ');
    /** Waits until the Cluster view shows each node with the status `expect` gives it. */
    const waitForNodes = (what: string, expect: (node: string) => RegExp) =>
      waitUntil(what, () => rowLabels(clusterPane()), (labels) => nodes.every((n) => labels.some((l) => expect(n).test(l))), UI_TIMEOUT);
    const waitForStatusBar = (text: string) => waitUntil(`status bar "${text}"`, statusBarText, (t) => t.includes(text), UI_TIMEOUT);

    before(function () {
      const bug = e2eBug(catalog);
      if (!bug) return this.skip();
      system = bug.system;
      nodes = catalog.systems.find((s) => s.id === bug.system)?.manifest.nodes ?? [];
    });

    it('Launch Cluster (the Cluster view\'s welcome button) starts every node', async () => {
      await focusView(page, 'Cluster');
      // The welcome button; the focused view's title bar has a Launch Cluster action too.
      await clusterPane().locator('.monaco-button', { hasText: 'Launch Cluster' }).click();
      await waitForNodes('every node running', (n) => new RegExp(`^${n} running$`));
      await waitForStatusBar(`${system} ${nodes.length}/${nodes.length} running`);
      await screenshot('cluster-running');
    });

    it('Kill Node and Restart Node change the node and the status bar', async () => {
      const victim = nodes[0] ?? '';
      await runCommand(page, 'DDBench: Kill Node');
      await pickQuickItem(page, victim);
      await waitForNodes(`${victim} down`, (n) => new RegExp(n === victim ? `^${n} (stopped|exited)$` : `^${n} running$`));
      await waitForStatusBar(`${system} ${nodes.length - 1}/${nodes.length} running`);
      await screenshot('node-killed');
      await runCommand(page, 'DDBench: Restart Node');
      await pickQuickItem(page, victim);
      await waitForNodes('every node running again', (n) => new RegExp(`^${n} running$`));
      await waitForStatusBar(`${system} ${nodes.length}/${nodes.length} running`);
    });

    it('Pause/Resume Node and Partition/Heal show in the Cluster view', async () => {
      const node = nodes[nodes.length - 1] ?? '';
      await runCommand(page, 'DDBench: Pause Node');
      await pickQuickItem(page, node);
      await waitForNodes(`${node} paused`, (n) => new RegExp(n === node ? `^${n} paused$` : `^${n} running$`));
      await runCommand(page, 'DDBench: Resume Node');
      await pickQuickItem(page, node);
      await waitForNodes('every node running', (n) => new RegExp(`^${n} running$`));

      const header = clusterPane().locator('.pane-header');
      await runCommand(page, 'DDBench: Partition Nodes…');
      await pickQuickItem(page, node);
      await page.locator('.quick-input-widget .monaco-button', { hasText: 'OK' }).click();
      await header.getByText('partitioned').waitFor({ timeout: UI_TIMEOUT });
      await screenshot('partitioned');
      await runCommand(page, 'DDBench: Heal Partition');
      await header.getByText('partitioned').waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    });

    it('Stop Cluster stops every node process', async () => {
      await runCommand(page, 'DDBench: Stop Cluster');
      await clusterPane().getByText('No cluster is running.').waitFor({ timeout: UI_TIMEOUT });
      await waitForStatusBar(`${system} stopped`);
      assert.deepEqual(nodeProcessesUnder(dirs.extensionsDir), [], 'node processes left after Stop Cluster');
    });

    it('reloading the window stops a running cluster (deactivate)', async () => {
      await runCommand(page, 'DDBench: Launch Cluster');
      await waitForNodes('every node running', (n) => new RegExp(`^${n} running$`));
      assert.equal(nodeProcessesUnder(dirs.extensionsDir).length, nodes.length);
      await reloadWindow(page);
      await waitUntil('no node process left', async () => nodeProcessesUnder(dirs.extensionsDir), (left) => left.length === 0, UI_TIMEOUT);
      // The reloaded window restores the DDBench side bar it had (Launch Cluster focused it): show it without toggling it shut.
      await focusView(page, 'Cluster');
      await clusterPane().getByText('No cluster is running.').waitFor({ timeout: UI_TIMEOUT });
      await waitForStatusBar(`${system} stopped`);
    });

    it('Run Reproducer reports each trial in the DDBench output channel', async () => {
      await runCommand(page, 'DDBench: Run Reproducer');
      const text = await waitUntil(
        'the reproducer summary in Output › DDBench',
        () => editorText(page.locator('.part.panel')),
        (t) => /=== .*: \d+\/2 passed, \d+\/2 failed/.test(t),
        UI_TIMEOUT,
      );
      assert.match(text, /simulated seeds/);
      // The failing seeds follow the trials, so the trials are at the top of the channel (Monaco renders only the lines in view).
      await page.locator('.part.panel .monaco-editor textarea').first().focus();
      await page.keyboard.press('Control+Home');
      const top = await waitUntil('the first trials in view', () => editorText(page.locator('.part.panel')), (t) => /=== Reproducer for/.test(t), UI_TIMEOUT);
      assert.match(top, /trial +1 +(PASS|FAIL|ERROR|TIMEOUT) +seed \d+/);
      assert.match(top, /trial +2 +(PASS|FAIL|ERROR|TIMEOUT) +seed \d+/);
      assert.match(top, /events: [\s\S]*?events\.jsonl/);
      await screenshot('reproducer-output');
    });

    /** The timeline webview's page (VS Code nests it in two iframes). */
    const timelineFrame = () => ddbenchWebview(page);
    const timelineHook = () =>
      timelineFrame()
        .locator('body')
        .evaluate(() => {
          const h = window.__ddbenchTimeline;
          return h === undefined ? undefined : { ready: h.ready, rows: h.rows, counts: h.counts, stats: h.stats, selection: h.selection, errors: h.errors };
        });

    it('Show Timeline opens the latest reproducer trial: one lane per node, message arrows', async () => {
      await runCommand(page, 'DDBench: Show Timeline');
      await timelineFrame().locator('canvas[aria-roledescription="timeline"]').waitFor({ timeout: UI_TIMEOUT });
      const hook = await waitUntil('the timeline drawn with data', timelineHook, (h) => h?.ready === true && (h.stats?.rows ?? 0) > 0, UI_TIMEOUT);
      assert.ok(hook);
      for (const n of nodes) assert.ok(hook.rows.includes(n), `lane ${n} in ${hook.rows.join(', ')}`);
      assert.ok(hook.rows.includes('harness'));
      assert.ok(hook.counts.arrows > 0 && (hook.stats?.arrows ?? 0) > 0, 'message arrows');
      assert.deepEqual(hook.errors, []);
      assert.match(await page.locator('.editor-group-container.active .tab.active').innerText(), /Timeline: .* · seed \d+/);
      // Redrawn at the new size: two frames for the resize to reach the page, then no request in flight.
      const redrawn = () => timelineFrame().locator('body').evaluate(async () => {
        for (let i = 0; i < 2; i++) await new Promise((resolve) => requestAnimationFrame(resolve));
        await window.__ddbenchTimeline?.idle();
      });
      // The picture is of the timeline, so the reproducer's output makes room for it.
      await runCommand(page, 'View: Hide Panel');
      await wb!.docScreenshot('timeline', { maximized: true, settle: redrawn });
    });

    it('the timeline jumps to an event\'s source line in the editor', async () => {
      const search = timelineFrame().locator('input[type="search"]');
      await search.fill('member started');
      await search.press('Enter');
      const open = timelineFrame().locator('aside.details button', { hasText: /^Open src\// });
      await open.waitFor({ timeout: UI_TIMEOUT });
      const [, file, line] = /^Open (.+):(\d+)$/.exec(await open.innerText()) ?? [];
      await open.click();
      await page.locator('.tabs-container .tab.active', { hasText: path.basename(file ?? '') }).waitFor({ timeout: UI_TIMEOUT });
      await waitForStatusBar(`Ln ${line}`);
      await screenshot('timeline-jump-to-source');
    });
  });
});

/**
 * The bug these tests open: the set's first raftkv bug, the one the other e2e suites use
 * too, so what the editor is tested on does not change as bugs are added; else the first.
 */
function e2eBug(catalog: Catalog): Catalog['bugs'][number] | undefined {
  return catalog.bugs.find((b) => b.id === 'raftkv-lock-double-grant') ?? catalog.bugs[0];
}

/** Live node processes (the bundled live host) of the extension installed under `dir`. */
/** The live hosts started from `dir` (the nodes themselves, not the bubblewrap processes around them). */
function nodeProcessesUnder(dir: string): string[] {
  const r = spawnSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return r.stdout.split('\n').filter((line) => line.includes(dir) && line.includes('live-host') && path.basename(line.trim().split(/\s+/)[1] ?? '') !== 'bwrap');
}
