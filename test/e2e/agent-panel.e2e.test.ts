// End to end: the agent panel in a real VS Code (code-server, headless Chromium) on a
// raftkv-lock-double-grant workspace, against the scripted OpenAI-compatible server.
// The panel is pointed at the server (settings, and the key stored through the panel),
// Start runs a scripted investigation (read a file, propose the reference fix, submit),
// the transcript streams, the fix is verified for real (one live reproducer trial), the
// patch opens in the diff editor, is edited there and accepted into the workspace, and
// the run is recorded in the workspace's records. Needs `npm run setup:e2e`; skipped without it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { openWorkspace } from '../../src/core/bugs/workspace';
import { AttemptRecord, StudyLine } from '../../src/core/study/schema';
import { ATTEMPTS_FILE, workspaceRecordsDir } from '../../src/core/study/store';
import { allText, call, KEY } from '../support/agent-fixture';
import { ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { prepareSuite, reloadWindow, runCommand, waitUntil, webviewFrame, UI_TIMEOUT, Workbench } from '../support/workbench';

const root = path.resolve(__dirname, '..', '..');
const artifacts = path.join(root, 'test-artifacts', 'e2e-agent');
const BUG = 'raftkv-lock-double-grant';
const MODEL = 'scripted-model';
/** Not the panel's default, so the record shows the setting reached the run. */
const CONDITION = 'context-augmented';
/** A live verification of a RaftKV fix (one reproducer trial, regression trials, simulated seeds) on a loaded machine. */
const VERIFY_TIMEOUT = 8 * 60_000;
const THOUGHT = 'The waiters are granted in progress(); let me read it.';
const EDIT_NOTE = '// reviewed in the diff editor';

/** The reference fix of the bug: the lines its bug.patch removed, and the line they follow. */
function referenceFix(): { file: string; anchor: string; fix: string } {
  const patch = fs.readFileSync(path.join(root, 'bugs', 'raftkv', BUG, 'bug.patch'), 'utf8').split('\n');
  const file = patch.find((l) => l.startsWith('--- a/'))!.slice('--- a/'.length);
  const first = patch.findIndex((l) => l.startsWith('-') && !l.startsWith('---'));
  const removed = patch.slice(first).filter((l) => l.startsWith('-'));
  assert.equal(patch.slice(first).findIndex((l) => !l.startsWith('-')), removed.length, 'the reference fix is one block of lines');
  return { file, anchor: `${patch[first - 1]!.slice(1)}\n`, fix: removed.map((l) => `${l.slice(1)}\n`).join('') };
}

describe('e2e: the agent panel (code-server + headless Chromium + scripted endpoint)', function () {
  this.timeout(20 * 60_000);
  const { file, anchor, fix } = referenceFix();
  let tmp: string | undefined;
  let ws: string;
  let endpoint: ScriptedOpenAIServer | undefined;
  let wb: Workbench | undefined;

  before(async function () {
    tmp = prepareSuite(this, artifacts, 'ddbench-e2e-agent-');
    ws = await openWorkspace(await loadCatalog(path.join(root, 'bugs')), BUG, path.join(tmp, 'ws'));
    endpoint = await ScriptedOpenAIServer.start({
      apiKey: KEY,
      replies: [
        { ...call('read_file', { path: file, start_line: 40, end_line: 60 }), content: THOUGHT },
        call('propose_edit', { path: file, edits: [{ search: anchor, replace: anchor + fix }] }),
        call('submit', { explanation: "a waiter whose key went with its lease must get 'session expired', not the lock" }),
      ],
    });
    wb = await Workbench.start({
      tmp,
      artifacts,
      settings: {},
      folder: ws,
      viewport: { width: 1500, height: 950 },
      checkInstalled: (dir) => assert.ok(fs.existsSync(path.join(dir, 'dist', 'media', 'agent.js')), 'the VSIX ships the panel'),
    });
    // The status bar item appears once the extension has activated, so its commands are known.
    await wb.page.locator('.part.statusbar', { hasText: 'raftkv stopped' }).waitFor({ timeout: UI_TIMEOUT });
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await wb?.screenshot(`failed-${this.currentTest.title.replace(/\W+/g, '-')}`);
  });

  after(async function () {
    this.timeout(60_000);
    await wb?.close();
    await endpoint?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('runs the scripted agent from the panel, streams it, verifies the fix, and accepts the patch from the diff editor', async () => {
    const page = wb!.page;
    await runCommand(page, 'DDBench: Open Agent Panel');
    let panel = await agentFrame(wb!);
    await panel.getByText(`${BUG} · ${ws}`).waitFor({ timeout: UI_TIMEOUT });
    await panel.locator('#field-baseUrl').fill(endpoint!.url);
    await panel.locator('#field-model').fill(MODEL);
    await panel.locator('#field-condition').selectOption(CONDITION);
    await panel.locator('#field-trials').fill('1');
    await panel.locator('#field-key').fill(KEY);
    await panel.getByRole('button', { name: 'Store key' }).click();
    const keyStatus = panel.locator('.key-row + .hint');
    await waitUntil('the key to be stored', () => keyStatus.getAttribute('data-source'), (s) => s === 'secret-storage', UI_TIMEOUT);
    assert.equal(await panel.locator('#field-key').inputValue(), '', 'the key does not stay on the page');
    await wb!.screenshot('settings');

    // Every text node the transcript gains inside a step's reply: streamed pieces arrive one by one, the final reply as a whole.
    await panel.evaluate(() => {
      const added: string[] = [];
      (window as unknown as { __replyText: string[] }).__replyText = added;
      new MutationObserver((records) => {
        for (const r of records) {
          if (!(r.target instanceof HTMLElement) || !r.target.classList.contains('assistant')) continue;
          r.addedNodes.forEach((n) => {
            if (n.nodeType === Node.TEXT_NODE) added.push(n.textContent ?? '');
          });
        }
      }).observe(document.querySelector('.transcript')!, { childList: true, subtree: true });
    });

    // Ctrl+Enter starts the run, like the Start button.
    await panel.locator('#field-model').focus();
    await page.keyboard.press('Control+Enter');
    await panel.getByText(/^Run of raftkv-lock-double-grant with scripted-model \(context-augmented\)\./).waitFor({ timeout: UI_TIMEOUT });
    await panel.getByText(/^Debugging context given up front/).waitFor({ timeout: VERIFY_TIMEOUT });
    await panel.locator('.step .assistant', { hasText: THOUGHT }).waitFor({ timeout: UI_TIMEOUT });
    for (const tool of ['read_file', 'propose_edit', 'submit']) {
      await panel.locator('details.tool summary', { hasText: tool }).first().waitFor({ timeout: UI_TIMEOUT });
    }
    await panel.getByText(/^Verifying attempt 1/).waitFor({ timeout: UI_TIMEOUT });
    await wb!.screenshot('verifying');
    const pieces = await panel.evaluate(() => (window as unknown as { __replyText: string[] }).__replyText);
    const streamed = pieces.filter((p) => p.length > 0 && p !== THOUGHT);
    assert.ok(streamed.length >= 2 && THOUGHT.startsWith(streamed.slice(0, 2).join('')), `the reply was shown in streamed pieces before it was whole: ${JSON.stringify(pieces)}`);
    assert.match(await panel.locator('details.tool', { hasText: 'read_file' }).locator('.tool-status').innerText(), /^done · \d+ ms$/);

    await panel.getByRole('heading', { name: 'Attempt 1: verified' }).waitFor({ timeout: VERIFY_TIMEOUT });
    await panel.getByText(`Verified: attempt 1 fixes ${BUG}. Review it in the diff editor and accept it.`).waitFor({ timeout: UI_TIMEOUT });
    const card = panel.locator('section.attempt', { hasText: 'Attempt 1: verified' });
    const verdict = await card.innerText();
    for (const line of [/^lock-waiter-lease-expiry #\d+ \(seed \d+\): pass$/m, /^regression basic: 2\/2 passed$/m, /^regression failover: 2\/2 passed$/m]) assert.match(verdict, line);
    assert.match(await panel.locator('.totals').innerText(), /^3 steps · 1 attempts · [\d,]+ tokens · cost n\/a/);

    // The patch opened beside the panel, which kept the focus.
    const diffTab = page.locator('.tabs-container .tab', { hasText: `${path.basename(file)}: workspace ↔ agent attempt 1 (editable)` });
    await diffTab.waitFor({ timeout: UI_TIMEOUT });
    await waitUntil('the panel to keep the focus', () => page.locator('.editor-group-container.active .tab.active').innerText(), (t) => t.includes('DDBench Agent'), UI_TIMEOUT);
    assert.equal(fs.readFileSync(path.join(ws, file), 'utf8').includes(fix), false, 'nothing reaches the workspace before Accept');
    await wb!.screenshot('diff-opened');
    // The README's picture shows the run, so the settings are folded away for it.
    const settings = panel.locator('details.settings > summary');
    await settings.click();
    await wb!.docScreenshot('agent-panel');
    await settings.click();

    // The person edits the agent's version before accepting it.
    await page.locator('.monaco-diff-editor .editor.modified .view-lines').first().click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type(`\n${EDIT_NOTE}`);
    await wb!.screenshot('edited');

    panel = await agentFrame(wb!);
    await panel.locator('section.attempt').getByRole('button', { name: 'Accept' }).click();
    await panel.getByText('Accepted into the workspace (with your edits).').waitFor({ timeout: UI_TIMEOUT });
    const source = fs.readFileSync(path.join(ws, file), 'utf8');
    assert.ok(source.includes(anchor + fix), 'the reference fix is in the workspace file');
    assert.ok(source.trimEnd().endsWith(EDIT_NOTE), "the person's edit is in the workspace file");
    await diffTab.waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    await wb!.screenshot('accepted');

    // The finished run is recorded as an attempt, as `ddbench agent` records it (written once the run has ended).
    const recordsFile = path.join(workspaceRecordsDir(ws), ATTEMPTS_FILE);
    await waitUntil('the run to be recorded', async () => fs.existsSync(recordsFile), (found) => found, UI_TIMEOUT);
    const lines = fs.readFileSync(recordsFile, 'utf8').trim().split('\n').map((l) => StudyLine.parse(JSON.parse(l)));
    assert.equal(lines.length, 1);
    const record = AttemptRecord.parse(lines[0]);
    assert.deepEqual(record.actor, { kind: 'agent', model: MODEL, condition: CONDITION, protocol: 'tools', endpoint: { kind: 'local', host: '127.0.0.1' } });
    assert.deepEqual([record.bug.id, record.status, record.attempts, record.verifications.map((v) => v.verified)], [BUG, 'verified', 1, [true]]);
    assert.deepEqual([record.verifications[0]!.reproducer?.passed, record.verifications[0]!.reproducer?.total], [1, 1]);
    assert.ok((record.verifications[0]!.sim?.seeds ?? 0) > 0 && record.verifications[0]!.sim?.failed === 0, 'the simulated seeds ran and passed');
    assert.ok(record.timeToFixMs !== undefined && record.timeToFixMs > 0);
    assert.match(record.patch?.diff ?? '', /session expired/);
    assert.deepEqual([record.agent?.steps, record.agent?.stopReason], [3, 'verified']);

    // The review is in the run's trajectory; the key is in no record, trajectory or log.
    const trajectory = record.agent!.trajectory!;
    assert.ok(trajectory.startsWith(path.join(ws, '.ddbench', 'runs')), trajectory);
    const reviews = fs.readFileSync(trajectory, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; decision?: string; edited?: boolean });
    assert.deepEqual(reviews.filter((r) => r.type === 'review').map((r) => [r.decision, r.edited]), [['accepted', true]]);
    assert.ok(!allText(path.join(ws, '.ddbench')).includes(KEY), 'the key is in the run records');
    assert.ok(!allText(path.join(wb!.dirs.userDataDir, 'logs')).includes(KEY), 'the key is in the logs');
    assert.ok(endpoint!.requests.length === 3 && endpoint!.requests.every((r) => r.authorization === `Bearer ${KEY}`), 'the key stored through the panel reached the endpoint');
  });

  it('restores the panel with its settings after a window reload', async () => {
    const page = wb!.page;
    await reloadWindow(page);
    await page.locator('.part.statusbar', { hasText: 'raftkv stopped' }).waitFor({ timeout: UI_TIMEOUT });
    const panel = await agentFrame(wb!);
    await waitUntil('the restored settings', () => panel.locator('#field-baseUrl').inputValue(), (v) => v === endpoint!.url, UI_TIMEOUT);
    assert.deepEqual([await panel.locator('#field-model').inputValue(), await panel.locator('#field-condition').inputValue(), await panel.locator('#field-trials').inputValue()], [MODEL, CONDITION, '1']);
    await wb!.screenshot('restored');
  });
});

/** The agent panel's frame. */
function agentFrame(wb: Workbench): Promise<Frame> {
  return webviewFrame(wb.page, 'the agent panel', '#app details.settings');
}
