import * as vscode from 'vscode';
import { codeColumn } from './webview/group';
import type { WorkspaceInfo } from '../core/bugs/workspace';
import { UserError } from '../core/errors';
import { hintLadder, revealReferenceFix, takeNextHint, type Hint, type HintLadder } from '../core/study/hints';
import { appendPractice } from '../core/study/practice';
import { countsLine, countsOf, verificationLines } from '../core/verify/format';
import { workspaceDiff } from '../core/verify/verify';
import { COMMANDS } from './commands';
import { verifyWithProgress } from './verifyProgress';
import { offerResult, writeFailedChecks } from './results';
import type { DDBenchSettings } from './settings';
import type { TimelinePanel } from './timelinePanel';
import { completeStep } from './walkthrough';

type Handler = (arg?: unknown) => Promise<void>;
export type PracticeCommand = 'showNextHint' | 'showHints' | 'revealReferenceFix' | 'verifyFix';

/**
 * Practising on a bug outside a study: the hint ladder one rung at a time, the
 * reference fix behind a confirmation, and verifying a fix. What is taken and verified
 * is recorded (core/study/practice.ts), so the Bugs view can show attempted and solved.
 */
export class Practice {
  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly workspace: () => WorkspaceInfo | undefined,
    private readonly settings: () => DDBenchSettings,
    private readonly timeline: TimelinePanel,
    /** The Submit Fix command takes over Verify during a study attempt. */
    private readonly attemptInProgress: () => boolean,
    private readonly changed: () => void,
  ) {}

  handlers(): Record<PracticeCommand, Handler> {
    return {
      showNextHint: () => this.nextHint(),
      showHints: () => this.allHints(),
      revealReferenceFix: () => this.reference(),
      verifyFix: () => this.verify(),
    };
  }

  private async nextHint(): Promise<void> {
    const ws = this.requireWorkspace();
    const ladder = await takeNextHint(ws.dir);
    this.changed();
    const hint = ladder.revealed;
    if (!hint) {
      const reveal = 'Reveal the Reference Fix…';
      const choice = await vscode.window.showInformationMessage(`DDBench: every hint of ${ws.bugId} is shown (${ladder.total} of ${ladder.total}).`, 'Show Hints Taken', ...(ladder.during === 'practice' ? [reveal] : []));
      if (choice === 'Show Hints Taken') await this.allHints(ladder);
      else if (choice === reveal) await this.reference();
      return;
    }
    this.output.appendLine(`[hint] ${ws.bugId} ${hintTitle(hint)}: ${hint.text}`);
    completeStep('hintTaken');
    const next = 'Next Hint';
    const all = 'Show Hints Taken';
    const choice = await vscode.window.showInformationMessage(`${hintTitle(hint)}: ${hint.text}`, ...(hint.level < hint.total ? [next] : []), all);
    if (choice === next) await this.nextHint();
    else if (choice === all) await this.allHints();
  }

  /** The hints taken so far as a Markdown document beside the webviews, one heading per rung. */
  private async allHints(known?: HintLadder): Promise<void> {
    const ws = this.requireWorkspace();
    const ladder = known ?? (await hintLadder(ws.dir));
    const lines = [`# Hints for ${ws.bugId}`, '', `${ladder.shown.length} of ${ladder.total} taken${ladder.during === 'attempt' ? ' in this attempt' : ''}; each one taken is recorded.`, ''];
    for (const h of ladder.shown) lines.push(`## ${hintTitle(h)}`, '', h.text, '');
    if (ladder.shown.length < ladder.total) lines.push(`*"DDBench: ${COMMANDS.showNextHint.title}" takes the next one.*`);
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: lines.join('\n') });
    await vscode.window.showTextDocument(doc, { preview: true, viewColumn: codeColumn() });
  }

  private async reference(): Promise<void> {
    const ws = this.requireWorkspace();
    if (this.attemptInProgress()) throw new UserError('the reference fix is not shown during a study attempt; submit a verified fix or give up first');
    const yes = 'Reveal';
    const choice = await vscode.window.showWarningMessage(
      `Reveal the reference fix of ${ws.bugId}?`,
      { modal: true, detail: 'It shows the change that fixes the bug, and practice on this bug ends being a puzzle. The reveal is recorded in the workspace.' },
      yes,
    );
    if (choice !== yes) return;
    const diff = await revealReferenceFix(ws.dir);
    this.changed();
    const doc = await vscode.workspace.openTextDocument({ language: 'diff', content: diff });
    await vscode.window.showTextDocument(doc, { preview: true, viewColumn: codeColumn() });
  }

  private async verify(): Promise<void> {
    const ws = this.requireWorkspace();
    if (this.attemptInProgress()) throw new UserError(`an attempt is in progress: use "DDBench: ${COMMANDS.submitAttempt.title}", which records the submission`);
    await vscode.workspace.saveAll(false);
    if (!(await workspaceDiff(ws.dir)).trim()) throw new UserError("your workspace has no changes to the bug's code yet; edit src/ and verify again");
    const s = this.settings();
    const abort = new AbortController();
    this.output.appendLine(`\n=== Verifying your fix for ${ws.bugId}`);
    const result = await verifyWithProgress(ws, s, abort);
    if (abort.signal.aborted) {
      this.output.appendLine('=== Cancelled: no verdict');
      return;
    }
    for (const line of verificationLines(result)) this.output.appendLine(`    ${line}`);
    writeFailedChecks(this.output, result);
    appendPractice(ws.dir, { v: 1, at: new Date().toISOString(), kind: 'verify', verified: result.verified, failing: result.failing.map((c) => c.check) });
    this.changed();
    const counts = countsLine(countsOf(result));
    if (result.verified) {
      completeStep('fixVerified');
      void vscode.window.showInformationMessage(`DDBench: verified — your fix for ${ws.bugId} passes (${counts}). The bug is marked solved.`);
      return;
    }
    const moved = result.moved.length > 0 ? ` Your change moved the failure: ${result.moved.map((c) => `"${c.check}"`).join(', ')} fails now, which the bug's own code passes.` : '';
    const named = result.failing.map((c) => `"${c.check}"`).join(', ');
    void offerResult(`DDBench: not verified — ${named ? `failed ${named}` : counts}.${moved}`, true, { ...result, runs: [result, ...result.regression] }, this.timeline, this.output);
  }

  private requireWorkspace(): WorkspaceInfo {
    const ws = this.workspace();
    if (!ws) throw new UserError('this window has no bug workspace open; use "DDBench: Open Bug" first');
    return ws;
  }
}

function hintTitle(h: Hint): string {
  return `Hint ${h.level} of ${h.total} (${h.stage})`;
}
