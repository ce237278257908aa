import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Catalog } from '../core/bugs/catalog';
import { findBug } from '../core/bugs/catalog';
import { resetWorkspaceSource, resolveWorkspace, type WorkspaceInfo } from '../core/bugs/workspace';
import { patchStat } from '../core/study/patch-metrics';
import { UserError } from '../core/errors';
import { countsLine, countsOf } from '../core/verify/format';
import { workspaceDiff } from '../core/verify/verify';
import { loadRecords } from '../core/study/collect';
import { HumanAttempt, type EndStatus } from '../core/study/human';
import { generateParticipantCode, normaliseParticipantCode, participantCodeProblem } from '../core/study/participant';
import { materialiseComparison } from '../core/study/reference';
import type { AttemptRecord, Interaction } from '../core/study/schema';
import { workspaceRecordsDir } from '../core/study/store';
import { failedVerification, verificationOf } from '../core/study/verification';
import { COMMANDS, CONTEXT_KEYS, type CommandName } from './commands';
import type { DDBenchSettings } from './settings';
import type { StudySettings } from './studySettings';
import { verifyWithProgress } from './verifyProgress';
import { offerResult, writeFailedChecks, type CheckedRun } from './results';
import type { TimelinePanel } from './timelinePanel';
import { completeStep } from './walkthrough';

type Handler = (arg?: unknown) => Promise<void> | void;
export type StudyCommand = 'startAttempt' | 'submitAttempt' | 'giveUpAttempt' | 'attemptActions' | 'compareWithReference';

const LAST_CODE_KEY = 'ddbench.study.lastParticipantCode';
/** Edits are summed per file over this window, so a burst of keystrokes is one log line. */
const EDIT_FLUSH_MS = 5000;
const WARN_LEFT_MS = 5 * 60_000;

/**
 * A person's attempt at the open bug, in the editor: consent, participant code, the
 * timer in the status bar, the interaction log, submit, give up, and — only after the
 * attempt — the comparison with the reference fix. The records and their rules live
 * in core/study (HumanAttempt); this is the glue.
 */
export class StudySession implements vscode.Disposable {
  private attempt: HumanAttempt | undefined;
  private workspace: WorkspaceInfo | undefined;
  private submitting: Promise<void> | undefined;
  private ending: Promise<boolean> | undefined;
  private readonly edits = new Map<string, { inserted: number; deleted: number; changes: number }>();
  private readonly item = vscode.window.createStatusBarItem('ddbench.attempt', vscode.StatusBarAlignment.Left, 49);
  private readonly subscriptions: vscode.Disposable[] = [];
  /** Folders materialised for reference comparisons, removed when the window closes. */
  private readonly scratch: string[] = [];
  private readonly tick = setInterval(() => this.onTick(), 1000);
  private readonly flush = setInterval(() => this.flushEdits(), EDIT_FLUSH_MS);

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    private readonly catalog: () => Promise<Catalog>,
    private readonly settings: () => DDBenchSettings,
    private readonly study: () => StudySettings,
    private readonly timeline: TimelinePanel,
  ) {
    this.item.name = 'DDBench Attempt';
    this.item.command = COMMANDS.attemptActions.id;
    this.subscriptions.push(
      vscode.workspace.onDidOpenTextDocument((d) => {
        const rel = this.relative(d.uri);
        if (rel !== undefined) this.note({ kind: 'file-open', path: rel });
      }),
      vscode.workspace.onDidChangeTextDocument((e) => this.onEdit(e)),
      vscode.debug.onDidStartDebugSession((s) => this.note({ kind: 'debug', action: 'start', name: s.name })),
      vscode.debug.onDidTerminateDebugSession((s) => this.note({ kind: 'debug', action: 'stop', name: s.name })),
    );
  }

  /** The window's bug workspace changed: pick up an attempt left in progress there (a reload, a crash). */
  setWorkspace(ws: WorkspaceInfo | undefined): void {
    if (ws?.dir === this.workspace?.dir) return;
    this.flushEdits();
    this.workspace = ws;
    this.attempt = ws ? HumanAttempt.resume(workspaceRecordsDir(ws.dir)) : undefined;
    if (this.attempt && this.attempt.remainingMs() === 0) void this.endAttempt('abandoned');
    this.update();
  }

  /**
   * Called before every DDBench command runs: logs it, and refuses the agent's commands
   * during an attempt unless the study allows them. False means do not run it.
   */
  beforeCommand(name: CommandName): boolean {
    if (!this.attempt?.active) return true;
    if (/agent/i.test(name) && !this.attempt.agentAllowed) {
      this.note({ kind: 'refused', command: name });
      void vscode.window.showWarningMessage(`DDBench: this study does not allow the agent during an attempt (${COMMANDS[name].title}).`);
      return false;
    }
    this.note({ kind: 'command', command: name });
    return true;
  }

  /**
   * Why the agent may not start now (an attempt is running and the study does not allow
   * the agent), logged as a refusal; undefined when it may. The agent panel's Start
   * button is no command, so beforeCommand never sees it.
   */
  agentRefusal(): string | undefined {
    if (!this.attempt?.active || this.attempt.agentAllowed) return undefined;
    this.note({ kind: 'refused', command: 'agent-panel-start' });
    return 'this study does not allow the agent during an attempt';
  }

  handlers(): Record<StudyCommand, Handler> {
    return {
      startAttempt: () => this.start(),
      submitAttempt: () => this.submit(),
      giveUpAttempt: () => this.giveUp(),
      attemptActions: () => this.actions(),
      compareWithReference: (arg) => this.compareWithReference(typeof arg === 'string' ? arg : undefined),
    };
  }

  get inProgress(): boolean {
    return this.attempt?.active === true;
  }

  private async start(): Promise<void> {
    const ws = this.requireWorkspace();
    if (this.attempt?.active) throw new UserError(`an attempt at ${ws.bugId} is already in progress; submit your fix or give up first`);
    const study = this.study();
    const agree = 'I Agree';
    const agreeNoLog = 'I Agree, Without the Interaction Log';
    const choice = await vscode.window.showInformationMessage(
      `DDBench study: consent for an attempt at ${ws.bugId}`,
      { modal: true, detail: study.consentText },
      ...(study.interactionLog ? [agree, agreeNoLog] : [agree]),
    );
    if (choice === undefined) return;
    const startedFromEdits = await this.offerFreshCode(ws);
    if (startedFromEdits === undefined) return;
    const participant = await this.pickParticipant(study.participantCodePattern);
    if (participant === undefined) return;
    const catalog = await this.catalog();
    const bug = findBug(catalog, ws.bugId);
    this.attempt = HumanAttempt.start({
      recordsDir: workspaceRecordsDir(ws.dir),
      bug: { id: bug.id, system: bug.system, tier: bug.tier },
      participant,
      ...(study.label && { study: study.label }),
      consent: { text: study.consentText, interactionLog: study.interactionLog && choice === agree },
      agentAllowed: study.allowAgent,
      hintsAllowed: study.allowHints,
      startedFromEdits,
      ...(study.timeLimitMinutes !== null && { timeLimitMs: study.timeLimitMinutes * 60_000 }),
      toolVersion: String((this.context.extension.packageJSON as { version?: unknown }).version ?? 'unknown'),
    });
    this.output.appendLine(`[study] attempt ${this.attempt.id} at ${ws.bugId} started by ${participant}${study.timeLimitMinutes ? ` (limit ${study.timeLimitMinutes} min)` : ''}`);
    this.update();
    void vscode.window.showInformationMessage(
      `DDBench: attempt started${study.timeLimitMinutes ? ` (${study.timeLimitMinutes} minutes)` : ''}. Fix the bug described in ISSUE.md, then use "${COMMANDS.submitAttempt.title}".`,
    );
  }

  /**
   * An attempt's clock should start on the bug's own code: when the workspace already
   * differs, offer to put the bug's code back (the changes are saved as a patch first).
   * True when the attempt starts from edited code, undefined when the person cancelled.
   */
  private async offerFreshCode(ws: WorkspaceInfo): Promise<boolean | undefined> {
    const changes = await workspaceDiff(ws.dir);
    if (!changes.trim()) return false;
    const fresh = 'Start from the Bug\'s Code';
    const keep = 'Keep My Changes';
    const files = patchStat(changes).files;
    const choice = await vscode.window.showWarningMessage(
      `Your workspace already differs from the bug's code (${files.length} file${files.length === 1 ? '' : 's'}: ${files.slice(0, 3).join(', ')}${files.length > 3 ? ', …' : ''}).`,
      {
        modal: true,
        detail: `The attempt's time would not count the work already done. "${fresh}" saves your changes as a patch under .ddbench/ and puts the bug's code back; "${keep}" starts the attempt as it is, and the record says it started from edited code.`,
      },
      fresh,
      keep,
    );
    if (choice === undefined) return undefined;
    if (choice === keep) return true;
    await vscode.workspace.saveAll(false);
    const saved = resetWorkspaceSource(await resolveWorkspace(ws.dir, await this.catalog()), await workspaceDiff(ws.dir));
    if (saved) this.output.appendLine(`[study] your earlier changes are saved in ${saved}`);
    return false;
  }

  private async pickParticipant(pattern: string): Promise<string | undefined> {
    const last = this.context.globalState.get<string>(LAST_CODE_KEY);
    const fresh = generateParticipantCode();
    const items: (vscode.QuickPickItem & { code?: string })[] = [
      ...(last && !participantCodeProblem(last, pattern) ? [{ label: last, description: 'your code from last time', code: last }] : []),
      { label: 'Enter the code the study gave me…' },
      ...(participantCodeProblem(fresh, pattern) ? [] : [{ label: fresh, description: 'a new code, made up now (note it down)', code: fresh }]),
    ];
    const picked = await vscode.window.showQuickPick(items, { title: 'Participant code (never your name)', ignoreFocusOut: true });
    if (!picked) return undefined;
    const code =
      picked.code ??
      (await vscode.window.showInputBox({
        title: 'Participant code',
        prompt: 'The pseudonymous code the study gave you — never your name',
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() ? participantCodeProblem(normaliseParticipantCode(v), pattern) : undefined),
      })) ?? '';
    const normal = code && normaliseParticipantCode(code);
    if (normal) await this.context.globalState.update(LAST_CODE_KEY, normal);
    return normal || undefined;
  }

  private async submit(): Promise<void> {
    const attempt = this.requireAttempt();
    const ws = this.requireWorkspace();
    if (this.submitting) throw new UserError('a submission is being verified already');
    await vscode.workspace.saveAll(false);
    this.flushEdits();
    const diff = await workspaceDiff(ws.dir);
    if (!diff.trim()) throw new UserError('your workspace has no changes to the bug\'s code yet; edit src/ and submit again');
    const run = this.verify(attempt, ws, diff);
    this.submitting = run;
    try {
      await run;
    } finally {
      this.submitting = undefined;
    }
  }

  private async verify(attempt: HumanAttempt, ws: WorkspaceInfo, diff: string): Promise<void> {
    const started = new Date(attempt.record.startedAt);
    const s = this.settings();
    const abort = new AbortController();
    let record: AttemptRecord;
    let checked: CheckedRun | undefined;
    try {
      const result = await verifyWithProgress(ws, s, abort);
      if (abort.signal.aborted) {
        // A cancelled verification is no verdict, so no submission.
        void vscode.window.showInformationMessage('DDBench: verification cancelled; nothing was submitted.');
        return;
      }
      record = attempt.submitted(verificationOf(result, new Date(), started), diff);
      this.output.appendLine(`[study] submission ${record.attempts}: ${result.verified ? 'verified' : 'not verified'} — ${countsLine(countsOf(result))}; runs: ${result.runDir}`);
      writeFailedChecks(this.output, result);
      checked = { ...result, runs: [result, ...result.regression] };
    } catch (err) {
      if (abort.signal.aborted) return;
      record = attempt.submitted(failedVerification(diff, err instanceof Error ? err.message : String(err), new Date(), started), diff);
    }
    this.update();
    if (record.status === 'verified') {
      completeStep('fixVerified');
      const compare = 'Compare with the Reference Fix';
      const choice = await vscode.window.showInformationMessage(`DDBench: verified — ${ws.bugId} is fixed. Your attempt is recorded.`, compare);
      if (choice === compare) await this.compareWithReference(record.id);
    } else if (record.status === 'in-progress') {
      const last = record.verifications.at(-1);
      const message = `DDBench: not verified${last?.error ? ` (${last.error})` : ''}. ${failingLine(last) || verdictLine(last)} Keep going, or give up.`;
      if (checked) void offerResult(message, true, checked, this.timeline, this.output);
      else void vscode.window.showWarningMessage(message);
    }
  }

  private async giveUp(): Promise<void> {
    const ws = this.requireWorkspace();
    this.requireAttempt();
    const yes = 'Give Up';
    const choice = await vscode.window.showWarningMessage(`Give up on ${ws.bugId}? The attempt ends and is recorded as given up.`, { modal: true }, yes);
    if (choice === yes && (await this.endAttempt('gave-up'))) void vscode.window.showInformationMessage(`DDBench: you gave up on ${ws.bugId}; that is recorded too. "${COMMANDS.compareWithReference.title}" shows the reference fix now.`);
  }

  private async actions(): Promise<void> {
    const attempt = this.requireAttempt();
    const left = attempt.remainingMs();
    type Item = vscode.QuickPickItem & { run?: () => Thenable<void> };
    // The submissions so far, newest first, each with the checks it failed: the attempt's history.
    const history: Item[] = attempt.record.verifications
      .map((v, i): Item => ({
        label: `$(${v.verified ? 'pass' : 'error'}) Submission ${i + 1} · ${clock(v.elapsedMs)}`,
        description: v.verified ? 'verified' : v.error ? `not checked: ${v.error}` : 'not verified',
        detail: failingLine(v) || verdictLine(v) || undefined,
      }))
      .reverse();
    const picked = await vscode.window.showQuickPick<Item>(
      [
        { label: `$(pass) ${COMMANDS.submitAttempt.title}`, run: () => this.submit() },
        { label: `$(circle-slash) ${COMMANDS.giveUpAttempt.title}`, run: () => this.giveUp() },
        ...(attempt.hintsAllowed ? [{ label: `$(lightbulb) ${COMMANDS.showNextHint.title}`, run: () => vscode.commands.executeCommand<void>(COMMANDS.showNextHint.id) }] : []),
        ...(history.length > 0 ? [{ label: 'Submissions', kind: vscode.QuickPickItemKind.Separator }, ...history] : []),
      ],
      { title: `Attempt at ${attempt.record.bug.id}: ${clock(attempt.elapsedMs())} elapsed${left === undefined ? '' : `, ${clock(left)} left`}` },
    );
    await picked?.run?.();
  }

  /** The reference fix beside an ended attempt's final code, in the diff editor; never during an attempt. */
  private async compareWithReference(attemptId?: string): Promise<void> {
    const ws = this.requireWorkspace();
    const ended = loadRecords([workspaceRecordsDir(ws.dir)]).attempts.filter((a) => a.status !== 'in-progress');
    const record = attemptId ? ended.find((a) => a.id === attemptId) : ended.filter((a) => a.actor.kind === 'human').at(-1);
    if (!record) throw new UserError(attemptId ? "that attempt is not in this workspace's records" : 'no ended attempt in this workspace yet');
    await this.compareRecord(record);
  }

  /** Also for the comparison view's records, which may come from other folders. */
  async compareRecord(record: AttemptRecord): Promise<void> {
    if (this.attempt?.active) throw new UserError('the reference fix is shown only after your attempt has ended (submit a verified fix or give up first)');
    if (record.status === 'in-progress') throw new UserError('that attempt is still in progress');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-compare-'));
    this.scratch.push(dir);
    // Without a patch (given up with no changes), "yours" is the bug's code as it was.
    const cmp = materialiseComparison(await this.catalog(), record.bug.id, record.patch?.diff ?? '', dir);
    const file =
      cmp.files.length === 1
        ? cmp.files[0]
        : (await vscode.window.showQuickPick(cmp.files.map((f) => ({ label: f.path, file: f })), { title: 'Compare which file?' }))?.file;
    if (!file) return;
    await vscode.commands.executeCommand('vscode.diff', vscode.Uri.file(file.reference), vscode.Uri.file(file.theirs), `${file.path}: reference fix ↔ ${record.actor.kind === 'human' ? 'your fix' : `${record.actor.model}'s fix`}`, { preview: true });
  }

  /** Ends the attempt once (the timer asks every second until it has), after a verification in flight. */
  private endAttempt(status: EndStatus): Promise<boolean> {
    this.ending ??= this.end(status).finally(() => (this.ending = undefined));
    return this.ending;
  }

  /** False when there was nothing to end (a verified submission finished first). */
  private async end(status: EndStatus): Promise<boolean> {
    const attempt = this.attempt;
    const ws = this.workspace;
    if (!attempt?.active || !ws) return false;
    await this.submitting;
    if (!attempt.active) return false;
    this.flushEdits();
    const diff = await workspaceDiff(ws.dir).catch(() => '');
    attempt.end(status, diff);
    this.output.appendLine(`[study] attempt ${attempt.id} ended: ${status}`);
    this.update();
    return true;
  }

  private onTick(): void {
    const left = this.attempt?.active ? this.attempt.remainingMs() : undefined;
    if (left === 0) {
      if (!this.ending) void this.endAttempt('timed-out').then((ended) => {
          if (ended) void vscode.window.showWarningMessage('DDBench: time is up. Your attempt is recorded as timed out.');
        });
      return;
    }
    if (this.attempt?.active) this.update();
  }

  private update(): void {
    const a = this.attempt;
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.attemptActive, a?.active === true);
    if (!a?.active) {
      this.item.hide();
      return;
    }
    const left = a.remainingMs();
    this.item.text = left === undefined ? `$(watch) ${clock(a.elapsedMs())}` : `$(watch) ${clock(left)} left`;
    this.item.backgroundColor = left !== undefined && left < WARN_LEFT_MS ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.tooltip = `DDBench attempt at ${a.record.bug.id}${a.record.actor.kind === 'human' ? ` (participant ${a.record.actor.participant})` : ''}: ${a.record.attempts} submission(s)${a.interactionLog ? '; interaction log on' : ''}. Click to submit or give up.`;
    this.item.show();
  }

  private note(event: Interaction): void {
    this.attempt?.note(event);
  }

  private onEdit(e: vscode.TextDocumentChangeEvent): void {
    if (!this.attempt?.active || !this.attempt.interactionLog || e.contentChanges.length === 0) return;
    const rel = this.relative(e.document.uri);
    if (rel === undefined) return;
    const sum = this.edits.get(rel) ?? { inserted: 0, deleted: 0, changes: 0 };
    for (const c of e.contentChanges) {
      sum.inserted += c.text.length;
      sum.deleted += c.rangeLength;
      sum.changes++;
    }
    this.edits.set(rel, sum);
  }

  private flushEdits(): void {
    for (const [file, s] of this.edits) this.note({ kind: 'edit', path: file, ...s });
    this.edits.clear();
  }

  /** A workspace file's path relative to the workspace; undefined for anything else (and for .ddbench). */
  private relative(uri: vscode.Uri): string | undefined {
    if (!this.workspace || uri.scheme !== 'file') return undefined;
    const rel = path.relative(this.workspace.dir, uri.fsPath);
    if (rel.startsWith('..') || path.isAbsolute(rel) || rel.startsWith('.ddbench')) return undefined;
    return rel.split(path.sep).join('/');
  }

  private requireWorkspace(): WorkspaceInfo {
    if (!this.workspace) throw new UserError('this window has no bug workspace open; use "DDBench: Open Bug" first');
    return this.workspace;
  }

  private requireAttempt(): HumanAttempt {
    if (!this.attempt?.active) throw new UserError(`no attempt in progress; use "DDBench: ${COMMANDS.startAttempt.title}" first`);
    return this.attempt;
  }

  dispose(): void {
    this.flushEdits();
    clearInterval(this.tick);
    clearInterval(this.flush);
    this.item.dispose();
    for (const s of this.subscriptions) s.dispose();
    for (const dir of this.scratch) fs.rmSync(dir, { recursive: true, force: true });
  }
}

function clock(ms: number): string {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** The failed checks of a submission in words: "Failed: "x" (reproducer); your change moved the failure." */
function failingLine(v: AttemptRecord['verifications'][number] | undefined): string {
  const failing = v?.failing ?? [];
  if (failing.length === 0) return '';
  const named = failing.map((c) => `"${c.check}" (${c.scenario})`).join(', ');
  return `Failed: ${named}${failing.some((c) => c.moved) ? "; your change moved the failure to a check the bug's own code passes" : ''}.`;
}

function verdictLine(v: AttemptRecord['verifications'][number] | undefined): string {
  if (!v?.reproducer) return '';
  const counts = countsLine(v);
  return `${counts[0]!.toUpperCase()}${counts.slice(1)}.`;
}
