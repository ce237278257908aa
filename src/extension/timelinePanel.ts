/**
 * The timeline webview panel: thin glue between VS Code and core/timeline. The
 * model answers the webview (TimelineSession checks every message); this file picks
 * what to show (latest run, a trial, files, a running cluster), opens source lines,
 * and restores the panel after a reload from the webview's persisted state.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { WorkspaceInfo } from '../core/bugs/workspace';
import { DDBENCH_DIR } from '../core/paths';
import type { Event } from '../core/events/event';
import { UserError } from '../core/errors';
import { LiveRun } from '../core/timeline/live';
import { TimelineModel, type RunSource } from '../core/timeline/model';
import { MAX_RUNS, migrateUiState, ToHost, type ToWebview } from '../core/timeline/protocol';
import { listTrials, loadExecutions, loadRun } from '../core/timeline/runs';
import { trialLabel } from '../core/verify/format';
import { TimelineSession } from '../core/timeline/session';
import type { ClusterSession } from './clusterSession';
import { errorMessage, reportError } from './present';
import { codeColumn } from './webview/group';
import { WebviewShell } from './webview/shell';

export const TIMELINE_VIEW_TYPE = 'ddbench.timeline';

const PICK_FILES = 'Events or log files…';

interface Shown {
  model: TimelineModel;
  session: TimelineSession;
  live: LiveRun | undefined;
  subscriptions: vscode.Disposable[];
}

export class TimelinePanel implements vscode.Disposable {
  private shown: Shown | undefined;
  private readonly shell: WebviewShell<ToHost, ToWebview>;

  constructor(
    context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    private readonly clusters: ClusterSession,
    private readonly workspace: () => WorkspaceInfo | undefined,
  ) {
    this.shell = new WebviewShell(context, output, {
      viewType: TIMELINE_VIEW_TYPE,
      name: 'timeline',
      bundle: 'timeline',
      schema: ToHost,
      // The session checks the protocol version of `ready` and answers nothing before it.
      receive: (msg) => this.shown?.session.receive(msg),
      restore: (state) => this.restore(state),
      closed: () => this.forget(),
    });
  }

  /**
   * The running cluster's events (live), else the latest run of the workspace; with
   * a folder or file argument (explorer menu), that instead.
   */
  async showLatest(arg?: unknown): Promise<void> {
    const target = arg instanceof vscode.Uri ? arg.fsPath : typeof arg === 'string' ? arg : undefined;
    const running = this.clusters.running;
    if (target === undefined && running !== undefined) {
      const live = new LiveRun(running.cluster, `${running.workspace.bugId}: live cluster (${path.basename(running.cluster.runDir)})`, (run) => this.liveChanged(run));
      return this.show([live.current()], live);
    }
    const dir = target ?? this.workspace()?.dir ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (dir === undefined) return this.pickFiles();
    try {
      await this.show([await this.load([dir])]);
    } catch (err) {
      if (!(err instanceof UserError) || target !== undefined) throw err;
      const choice = await vscode.window.showInformationMessage(`DDBench: ${err.message}`, 'Pick a Trial…', 'Open Files…');
      if (choice === 'Pick a Trial…') await this.pickTrial();
      else if (choice === 'Open Files…') await this.pickFiles();
    }
  }

  /** Any trial of any reproducer run of the workspace. */
  async pickTrial(): Promise<void> {
    const run = await this.chooseRun('Show the timeline of which trial?');
    if (run !== undefined) await this.show([run]);
  }

  async pickFiles(): Promise<void> {
    const chosen = await this.chooseFiles();
    if (chosen === undefined) return;
    const runs = await this.chooseExecutions(chosen);
    if (runs !== undefined) await this.show(runs);
  }

  /** A log of several executions (ShiViz's multi-execution logs): which to show, side by side when several. */
  private async chooseExecutions(chosen: { run: RunSource; files: string[]; regex?: string }): Promise<RunSource[] | undefined> {
    const executions = chosen.run.store.sources.flatMap((s) => s.executions ?? []);
    if (executions.length < 2) return [chosen.run];
    const items = executions.map((label, i) => ({ label, description: `execution ${i + 1}`, picked: i === 0, number: i + 1 }));
    const picked = await vscode.window.showQuickPick(items, {
      title: `${chosen.run.label} holds ${executions.length} executions`,
      placeHolder: 'Pick the executions to see side by side (Space to pick, Enter to show)',
      canPickMany: true,
    });
    if (picked === undefined || picked.length === 0) return undefined;
    const load = () => loadExecutions(chosen.files, chosen.regex === undefined ? {} : { regex: chosen.regex }, picked.slice(0, MAX_RUNS).map((p) => p.number));
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'DDBench: reading the executions' }, load);
  }

  /** A failing trial's timeline, beside a passing one (aligned, their first divergence marked) when given. */
  async showTrial(failingDir: string, passingDir?: string): Promise<void> {
    const runs = [await this.load([failingDir]), ...(passingDir === undefined ? [] : [await this.load([passingDir])])];
    await this.show(runs);
  }

  /** Event files (a simulated replay, say) under a label of the caller's. */
  async showFiles(files: string[], label?: string): Promise<void> {
    const run = await this.load(files);
    await this.show([label === undefined ? run : { ...run, label }]);
  }

  dispose(): void {
    this.shell.dispose();
  }

  private async chooseRun(title: string): Promise<RunSource | undefined> {
    const root = this.workspace()?.dir ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const trials = root === undefined ? [] : listTrials(root);
    type Item = vscode.QuickPickItem & { dir?: string };
    const items: Item[] = trials.map((t) => ({
      label: `${t.verdict === 'pass' ? '$(pass)' : '$(error)'} ${trialLabel(t)}`,
      description: t.verdict + (t.reason !== undefined ? `: ${t.reason}` : ''),
      detail: t.run,
      dir: t.dir,
    }));
    items.push({ label: `$(file) ${PICK_FILES}` });
    const picked = await vscode.window.showQuickPick(items, { title, placeHolder: trials.length === 0 ? 'No reproducer runs in this workspace yet' : 'Newest run first', matchOnDescription: true, matchOnDetail: true });
    if (picked === undefined) return undefined;
    return picked.dir === undefined ? (await this.chooseFiles())?.run : this.load([picked.dir]);
  }

  /** Files of any readable format; a plain-text log asks for its regex. */
  private async chooseFiles(): Promise<{ run: RunSource; files: string[]; regex?: string } | undefined> {
    const uris = await vscode.window.showOpenDialog({
      canSelectMany: true,
      openLabel: 'Show Timeline',
      filters: { 'Events, traces and logs': ['jsonl', 'json', 'log', 'txt'], 'All files': ['*'] },
    });
    if (uris === undefined || uris.length === 0) return undefined;
    const files = uris.map((u) => u.fsPath);
    try {
      return { run: await this.load(files), files };
    } catch (err) {
      if (!(err instanceof UserError) || !/regex/.test(err.message)) throw err;
      const regex = await vscode.window.showInputBox({
        title: 'Regex for the plain-text log',
        prompt: 'Named groups: host (the lane), event (the text), optionally clock (a JSON vector clock), ts, level',
        value: '^(?<host>\\S+) (?<clock>\\{.*?\\}) (?<event>.*)$',
        ignoreFocusOut: true,
      });
      return regex === undefined ? undefined : { run: await this.load(files, regex), files, regex };
    }
  }

  private load(inputs: string[], regex?: string): Thenable<RunSource> {
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'DDBench: reading the timeline' }, () => loadRun(inputs, regex === undefined ? {} : { regex }));
  }

  /** Shows runs in the panel, creating it if needed; a live run keeps updating until its cluster stops. */
  private async show(runs: RunSource[], live?: LiveRun): Promise<void> {
    this.forget();
    const model = new TimelineModel(runs, { title: runs[0].label, live: live !== undefined, capabilities: { openSource: true, compare: true } });
    const session = new TimelineSession(model, (msg) => this.shell.post(msg), {
      openSource: (event, inputs) => this.openSource(event, inputs),
      compare: (stop) => this.compare(stop),
      log: (message) => this.output.appendLine(`[timeline] ${message}`),
    });
    const subscriptions = [
      this.clusters.onDidChange(() => {
        if (live === undefined || this.clusters.running !== undefined || this.shown?.live !== live) return;
        live.dispose();
        model.setLive(false);
        session.update();
      }),
    ];
    this.shown = { model, session, live, subscriptions };
    // A fresh page: the webview says `ready` again and gets the new data.
    if (this.shell.open(`Timeline: ${runs[0].label}`)) this.shell.load();
  }

  /** Ends what the panel showed (a live run stops updating). */
  private forget(): void {
    const shown = this.shown;
    this.shown = undefined;
    shown?.live?.dispose();
    shown?.subscriptions.forEach((d) => d.dispose());
  }

  private liveChanged(run: RunSource): void {
    const shown = this.shown;
    if (shown?.live === undefined) return;
    shown.model.setRun(0, run);
    shown.session.update();
  }

  private async compare(stop: boolean): Promise<void> {
    const shown = this.shown;
    if (shown === undefined) return;
    if (!stop) {
      const run = await this.chooseRun('Compare with which run?');
      if (run === undefined) return;
      shown.model.setRun(1, run);
    } else shown.model.setRun(1, undefined);
    shown.session.update();
  }

  /**
   * Source paths in events are relative to the workspace the run belongs to: the
   * folder holding the run's `.ddbench`, else an open workspace folder that has the file.
   */
  private async openSource(event: Event, inputs: readonly string[]): Promise<void> {
    const src = event.src;
    if (src === undefined) throw new UserError('this event has no source location');
    const roots: string[] = [];
    for (let dir = path.dirname(inputs[0] ?? '.'); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
      if (path.basename(dir) === DDBENCH_DIR) roots.push(path.dirname(dir));
    }
    roots.push(...(vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath));
    const file = roots.map((r) => path.resolve(r, src.file)).find((f) => fs.existsSync(f));
    if (file === undefined) throw new UserError(`cannot find ${src.file} in the run's workspace or the open folders`);
    const line = Math.max(0, src.line - 1);
    await vscode.window.showTextDocument(vscode.Uri.file(file), {
      selection: new vscode.Range(line, 0, line, 0),
      viewColumn: codeColumn(),
      preserveFocus: false,
      preview: true,
    });
  }

  /** After a window reload: reopen what the panel showed, from the inputs its state remembers. */
  private async restore(raw: unknown): Promise<void> {
    const inputs = migrateUiState(raw).inputs ?? [];
    const usable = inputs.filter((files) => files.length > 0 && files.every((f) => fs.existsSync(f)));
    if (usable.length === 0 || usable.length !== inputs.length) {
      this.shell.notice('The run this timeline showed is no longer there. Use "DDBench: Show Timeline" to open another.');
      return;
    }
    try {
      await this.show(await Promise.all(usable.map((files) => loadRun(files))));
    } catch (err) {
      reportError(this.output, 'Restoring the timeline', err);
      this.shell.notice(`The timeline could not be restored: ${errorMessage(err)}`);
    }
  }
}
