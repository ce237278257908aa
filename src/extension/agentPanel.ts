/**
 * The agent panel: a webview over core/agent. The host owns the run (in this
 * extension host process), keeps its events so the webview can be rebuilt at any
 * time (`ready` → `init` with everything so far), opens each proposed patch in the
 * diff editor and applies accepted ones. The webview only shows and asks.
 */
import * as vscode from 'vscode';
import { runAgentAndRecord } from '../core/study/agent';
import { checkEndpoint } from '../core/agent/llm';
import { stopReasonText } from '../core/agent/events';
import { patchStat } from '../core/study/patch-metrics';
import { workspaceDiff } from '../core/verify/verify';
import type { AgentEvent } from '../core/agent/events';
import { agentSettingsOf, DEFAULT_PANEL_SETTINGS, PanelSettings, PROTOCOL_VERSION, ToHost, type Review, type ToWebview } from '../core/agent/panel-protocol';
import { appendToTrajectory } from '../core/agent/trajectory';
import type { WorkspaceInfo } from '../core/bugs/workspace';
import { UserError } from '../core/errors';
import { AgentKeys } from './agentKeys';
import { Proposals } from './agentProposals';
import { errorMessage, reportError } from './present';
import { codeColumn } from './webview/group';
import { WebviewShell } from './webview/shell';

export const AGENT_VIEW_TYPE = 'ddbench.agent';
const SETTINGS_KEY = 'ddbench.agent.panelSettings';
const TITLE = 'DDBench Agent';

interface Run {
  number: number;
  workspace: WorkspaceInfo;
  abort: AbortController;
  /** Every event but the streamed deltas (the replies carry the full text), for rebuilding the view. */
  events: AgentEvent[];
  reviews: Review[];
  trajectory: string | undefined;
  finished: Promise<void>;
  running: boolean;
}

export class AgentPanel implements vscode.Disposable {
  private readonly shell: WebviewShell<ToHost, ToWebview>;
  private run: Run | undefined;
  private runs = 0;
  private readonly keys: AgentKeys;
  private readonly proposals = new Proposals();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    private readonly workspace: () => WorkspaceInfo | undefined,
    /** Why the agent may not start now (a study attempt that does not allow it), if so. */
    private readonly refusal: () => string | undefined,
  ) {
    this.keys = new AgentKeys(context.secrets);
    context.subscriptions.push(this.proposals);
    this.shell = new WebviewShell(context, output, {
      viewType: AGENT_VIEW_TYPE,
      name: 'agent',
      bundle: 'agent',
      schema: ToHost,
      receive: (msg) => this.receive(msg),
      failed: (message) => this.post({ type: 'error', message }),
      // The page keeps its own UI state and asks for the rest when it is ready.
      restore: () => this.shell.load(),
    });
  }

  show(): void {
    this.shell.open(TITLE);
  }

  async setKey(): Promise<void> {
    const key = await vscode.window.showInputBox({ title: 'DDBench: API key for the agent', prompt: 'Stored in VS Code SecretStorage; never written to a file or log.', password: true, ignoreFocusOut: true });
    if (!key?.trim()) return;
    await this.keys.store(key.trim());
    await this.postKey();
  }

  async clearKey(): Promise<void> {
    await this.keys.clear();
    await this.postKey();
  }

  /** Accept or reject from the diff editor's title bar (the argument is the editor's document). */
  async reviewFromEditor(decision: Review['decision'], arg: unknown): Promise<void> {
    const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    const key = uri ? this.proposals.keyOf(uri) : undefined;
    if (!key) throw new UserError('this editor shows no patch proposed by the agent');
    const [run, attempt] = key.split('/').map((p) => Number(p.slice(1)));
    await this.review(decision, run!, attempt!);
  }

  /** Stops the run, if any, and waits until its trial clusters are gone. */
  async stop(): Promise<void> {
    this.run?.abort.abort();
    await this.run?.finished;
  }

  dispose(): void {
    this.run?.abort.abort();
    this.shell.dispose();
  }

  private async receive(msg: ToHost): Promise<void> {
    switch (msg.type) {
      case 'ready':
        return await this.init();
      case 'saveSettings':
        return await this.context.globalState.update(SETTINGS_KEY, msg.settings);
      case 'setKey':
        await this.keys.store(msg.key);
        return await this.postKey();
      case 'clearKey':
        return await this.clearKey();
      case 'start':
        await this.context.globalState.update(SETTINGS_KEY, msg.settings);
        return await this.start(msg.settings);
      case 'stop':
        return this.run?.abort.abort();
      case 'showDiff':
        return await this.proposals.show(this.keyFor(this.current().number, msg.attempt), `agent attempt ${msg.attempt}`);
      case 'accept':
      case 'reject':
        return await this.review(msg.type === 'accept' ? 'accepted' : 'rejected', this.current().number, msg.attempt);
      case 'testConnection': {
        const apiKey = await this.keys.resolve(msg.settings.apiKeyEnv);
        const check = await checkEndpoint(agentSettingsOf(msg.settings), apiKey);
        return this.post({ type: 'connection', ...check });
      }
      case 'openTrajectory': {
        const file = this.run?.trajectory;
        if (file) await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true, viewColumn: codeColumn() });
        return;
      }
    }
  }

  private async init(): Promise<void> {
    const settings = this.settings();
    const ws = this.run?.workspace ?? this.workspace();
    this.post({
      type: 'init',
      protocol: PROTOCOL_VERSION,
      settings,
      key: await this.keys.status(settings.apiKeyEnv),
      workspace: ws ? { bugId: ws.bugId, dir: ws.dir, edits: await editedFiles(ws.dir) } : null,
      running: this.run?.running ?? false,
      events: this.run?.events ?? [],
      reviews: this.run?.reviews ?? [],
    });
  }

  private async start(settings: PanelSettings): Promise<void> {
    if (this.run?.running) throw new UserError('the agent is already running; stop it first');
    const refused = this.refusal();
    if (refused) throw new UserError(refused);
    const workspace = this.workspace();
    if (!workspace) throw new UserError('this window has no bug workspace open; use "DDBench: Open Bug" first');
    const apiKey = await this.keys.resolve(settings.apiKeyEnv);
    const abort = new AbortController();
    const run: Run = { number: ++this.runs, workspace, abort, events: [], reviews: [], trajectory: undefined, finished: Promise.resolve(), running: true };
    this.run = run;
    await this.init();
    this.output.appendLine(`[agent] run ${run.number}: ${workspace.bugId} with ${settings.model} at ${settings.baseUrl} (${settings.condition})`);
    // Recorded like `ddbench agent` records it, beside people's attempts, for the comparison view and reports.
    run.finished = runAgentAndRecord({ workspace: workspace.dir, settings: agentSettingsOf(settings), ...(apiKey && { apiKey }), signal: abort.signal, onEvent: (e) => this.onEvent(run, e) })
      .then(({ result, record, notRecorded }) => {
        this.output.appendLine(`[agent] run ${run.number}: ${result.verified ? 'verified' : 'not verified'} (${stopReasonText(result.stopReason)}${result.error ? `: ${result.error}` : ''}); trajectory ${result.trajectory}`);
        if (record) this.output.appendLine(`[agent] run ${run.number}: recorded as attempt ${record.id}`);
        else if (notRecorded === 'configuration') this.output.appendLine(`[agent] run ${run.number}: not recorded: the settings are wrong (URL, key or model), so it was no attempt at the bug`);
      })
      .catch((err: unknown) => {
        this.post({ type: 'error', message: errorMessage(err) });
        reportError(this.output, 'The agent run', err);
      })
      .finally(() => {
        run.running = false;
        if (this.run === run) this.post({ type: 'running', running: false });
      });
  }

  private onEvent(run: Run, e: AgentEvent): void {
    if (e.type !== 'delta') run.events.push(e);
    if (e.type === 'started') run.trajectory = e.trajectory;
    if (e.type === 'attempt') {
      const key = this.keyFor(run.number, e.attempt.attempt);
      this.proposals.add(key, run.workspace.dir, e.attempt);
      // Opened beside the panel without taking the focus from whatever the person is doing.
      this.proposals.show(key, `agent attempt ${e.attempt.attempt}`).catch((err: unknown) => reportError(this.output, 'Showing the proposed patch', err));
    }
    if (this.run === run) this.post({ type: 'event', event: e });
  }

  private async review(decision: Review['decision'], runNumber: number, attempt: number): Promise<void> {
    const key = this.keyFor(runNumber, attempt);
    let edited = false;
    if (decision === 'accepted') {
      const done = await this.proposals.accept(key);
      if (!done) return;
      edited = done.edited;
    } else await this.proposals.reject(key);
    const review: Review = { attempt, decision, edited };
    const run = this.run?.number === runNumber ? this.run : undefined;
    if (run) {
      run.reviews.push(review);
      if (run.trajectory) appendToTrajectory(run.trajectory, { type: 'review', attempt, decision, edited, time: new Date().toISOString() });
      this.post({ type: 'review', review });
    }
    this.output.appendLine(`[agent] attempt ${attempt} of run ${runNumber} ${decision}${edited ? ' (edited first)' : ''}`);
  }

  private current(): Run {
    if (!this.run) throw new UserError('there is no agent run');
    return this.run;
  }

  private keyFor(run: number, attempt: number): string {
    return `r${run}/a${attempt}`;
  }

  private settings(): PanelSettings {
    const saved = PanelSettings.safeParse(this.context.globalState.get(SETTINGS_KEY));
    return saved.success ? saved.data : DEFAULT_PANEL_SETTINGS;
  }

  private async postKey(): Promise<void> {
    this.post({ type: 'key', key: await this.keys.status(this.settings().apiKeyEnv) });
  }

  private post(msg: ToWebview): void {
    this.shell.post(msg);
  }
}

/** The files the person changed in the workspace (shown before a run, which starts from the bug's code unless asked). */
async function editedFiles(dir: string): Promise<string[]> {
  try {
    return patchStat(await workspaceDiff(dir)).files;
  } catch {
    return [];
  }
}
