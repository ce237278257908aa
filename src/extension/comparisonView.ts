import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Catalog } from '../core/bugs/catalog';
import type { WorkspaceInfo } from '../core/bugs/workspace';
import { UserError } from '../core/errors';
import { loadRecords } from '../core/study/collect';
import { bugInfos } from '../core/study/reference';
import { buildReport, type BugInfo, type Report } from '../core/study/report';
import { reportPage, REPORT_CSS } from '../core/study/report-html';
import { workspaceRecordsDir } from '../core/study/store';
import { ToHost, ViewState, type ComparisonSource, type ToView } from '../core/study/view-protocol';
import type { StudySession } from './studyAttempt';
import { WebviewShell } from './webview/shell';

const COMPARISON_VIEW_TYPE = 'ddbench.comparison';
const TITLE = 'Attempt Comparison';

/**
 * The comparison of attempts in a webview: the current workspace's records, or records
 * folders a researcher picks (one per participant or machine, merged without
 * duplicates). The report is computed here and drawn by media/comparison; it follows
 * the workspace's records as they are written.
 */
export class ComparisonView implements vscode.Disposable {
  private readonly shell: WebviewShell<ToHost, ToView>;
  private source: ComparisonSource = { kind: 'workspace' };
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    private readonly catalog: () => Promise<Catalog>,
    private readonly workspace: () => WorkspaceInfo | undefined,
    private readonly study: StudySession,
  ) {
    this.shell = new WebviewShell(context, output, {
      viewType: COMPARISON_VIEW_TYPE,
      name: 'comparison',
      bundle: 'comparison',
      inlineStyle: WEBVIEW_COLOURS + REPORT_CSS,
      schema: ToHost,
      receive: (msg) => this.receive(msg),
      restore: (state) => {
        const saved = ViewState.safeParse(state);
        this.source = saved.success ? saved.data.source : { kind: 'workspace' };
        this.shell.load();
      },
    });
    const watcher = vscode.workspace.createFileSystemWatcher('**/.ddbench/records/*.jsonl');
    const changed = () => {
      if (this.source.kind === 'workspace') void this.post();
    };
    this.subscriptions.push(watcher, watcher.onDidChange(changed), watcher.onDidCreate(changed));
  }

  showWorkspace(): void {
    if (!this.workspace()) throw new UserError('this window has no bug workspace open; use "DDBench: Open Bug" first, or compare a records folder');
    this.open({ kind: 'workspace' });
  }

  async pickFolders(): Promise<void> {
    const picked = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: true, canSelectMany: true, filters: { 'Study records': ['jsonl'] }, title: 'Records folders or files to compare' });
    if (picked?.length) this.open({ kind: 'folders', paths: picked.map((u) => u.fsPath) });
  }

  private open(source: ComparisonSource): void {
    this.source = source;
    if (this.shell.open(TITLE)) void this.post();
  }

  private async receive(msg: ToHost): Promise<void> {
    switch (msg.type) {
      case 'ready':
      case 'refresh':
        return await this.post();
      case 'pickFolders':
        return await this.pickFolders();
      case 'exportHtml':
        return await this.exportHtml();
      case 'comparePatch': {
        const id = msg.attemptId;
        const record = loadRecords(this.paths()).attempts.find((a) => a.id === id);
        if (!record) throw new UserError('that attempt is no longer in the records');
        return await this.study.compareRecord(record);
      }
    }
  }

  private async post(): Promise<void> {
    if (!this.shell.panel) return;
    let msg: ToView;
    try {
      const report = await this.report();
      const title = this.source.kind === 'workspace' ? `Attempts in ${this.workspace()?.bugId ?? 'this workspace'}` : `Records: ${this.source.paths.map((p) => path.basename(p)).join(', ')}`;
      msg = { type: 'report', title, source: this.source, report, attemptInProgress: this.study.inProgress };
    } catch (err) {
      msg = { type: 'error', message: err instanceof Error ? err.message : String(err) };
    }
    this.shell.post(msg);
  }

  private async report(): Promise<Report> {
    const set = loadRecords(this.paths());
    let infos = new Map<string, BugInfo>();
    try {
      infos = bugInfos(await this.catalog());
    } catch (err) {
      this.output.appendLine(`[comparison] no bug set, so no similarity figures: ${err instanceof Error ? err.message : String(err)}`);
    }
    for (const p of set.problems) this.output.appendLine(`[records] skipped ${p.file}:${p.line}: ${p.kind}: ${p.message}`);
    return buildReport(set, infos);
  }

  private paths(): string[] {
    if (this.source.kind === 'folders') return this.source.paths;
    const ws = this.workspace();
    if (!ws) throw new UserError('no bug workspace is open; use Records Folders… to compare records from elsewhere');
    const dir = workspaceRecordsDir(ws.dir);
    fs.mkdirSync(dir, { recursive: true });
    return [dir];
  }

  private async exportHtml(): Promise<void> {
    const target = await vscode.window.showSaveDialog({ filters: { HTML: ['html'] }, title: 'Save the report (one file, works offline)' });
    if (!target) return;
    fs.writeFileSync(target.fsPath, reportPage(await this.report()));
    void vscode.window.showInformationMessage(`DDBench: report saved to ${target.fsPath}`);
  }

  dispose(): void {
    this.shell.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}

/** The report's colour variables from the VS Code theme. */
const WEBVIEW_COLOURS = `:root{--fg:var(--vscode-foreground);--bg:var(--vscode-editor-background);--muted:var(--vscode-descriptionForeground);--line:var(--vscode-panel-border,#8884);--people:var(--vscode-charts-purple);--symptom:var(--vscode-charts-blue);--context:var(--vscode-charts-green);--agents:var(--vscode-charts-orange);--heat:64,128,255}
body{color:var(--fg);background:var(--bg);font-family:var(--vscode-font-family);font-size:var(--vscode-font-size)}
.toolbar{display:flex;gap:8px;align-items:center;padding:8px 24px;border-bottom:1px solid var(--line);position:sticky;top:0;background:var(--bg)}
.toolbar .title{flex:1;font-weight:600}
button{color:var(--vscode-button-secondaryForeground);background:var(--vscode-button-secondaryBackground);border:none;padding:4px 10px;cursor:pointer;font:inherit}
button:hover{background:var(--vscode-button-secondaryHoverBackground)}button:focus-visible{outline:1px solid var(--vscode-focusBorder);outline-offset:1px}
ul.compare{list-style:none;padding:0}ul.compare li{margin:4px 0}
.error{color:var(--vscode-errorForeground);padding:0 24px}
`;
