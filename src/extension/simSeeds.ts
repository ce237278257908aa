/**
 * Simulated seeds in the editor: "Run Simulated Seeds…" runs the workspace's reproducer
 * over N seeds through core/sim (cancellable progress with seeds done and failed), the
 * Simulated Seeds view lists each run's failing seeds as they fail, and Enter or a click
 * on one replays it into the timeline (core/sim's replay, as `ddbench replay` does).
 * Runs are kept per workspace in workspaceState, so the list survives a reload.
 */
import * as vscode from 'vscode';
import type { WorkspaceInfo } from '../core/bugs/workspace';
import { UserError } from '../core/errors';
import { describeSeedRun, formatSeedRequest, parseSeedRequest, runSeedReport, type SeedFailure, type SeedRequest, type SeedRunReport } from '../core/sim/seed-report';
import { replayWorkspaceSeed } from '../core/sim/workspace';
import { COMMANDS, CONTEXT_VALUES, VIEWS } from './commands';

/** Runs kept per workspace: the newest first. */
const KEPT_RUNS = 5;
/** Failing seeds listed (and kept) per run; the rest are counted, and any seed can be replayed by number. */
const LISTED_FAILURES = 1000;
const STATE_KEY = 'ddbench.simSeeds.runs';
const REQUEST_KEY = 'ddbench.simSeeds.lastRequest';
/** The tree and the progress notification are refreshed at most this often while seeds run. */
const REFRESH_MS = 200;

interface LiveRun {
  request: SeedRequest;
  done: number;
  failures: SeedFailure[];
  abort: AbortController;
}

export type SeedsNode =
  | { kind: 'running'; live: LiveRun }
  | { kind: 'run'; report: SeedRunReport; newest: boolean }
  /** `scenario` is undefined while the run goes on: the reproducer's. */
  | { kind: 'seed'; seed: number; scenario: string | undefined; failure: SeedFailure; runId: string }
  | { kind: 'more'; count: number; runId: string };

/** What `replaySeed` accepts: a tree node, a seed number, or `{ seed, scenario? }` (keybindings, tests). */
function seedArg(arg: unknown): { seed: number; scenario?: string } | undefined {
  if (typeof arg === 'number' && Number.isSafeInteger(arg)) return { seed: arg };
  if (typeof arg === 'string' && /^\d+$/.test(arg.trim())) return { seed: Number(arg.trim()) };
  if (typeof arg === 'object' && arg !== null && 'seed' in arg && typeof arg.seed === 'number') {
    const scenario = 'scenario' in arg && typeof arg.scenario === 'string' ? arg.scenario : undefined;
    return { seed: arg.seed, ...(scenario !== undefined && { scenario }) };
  }
  return undefined;
}

/** What `runSimSeeds` accepts instead of asking: `{ seeds, from? }` or the text a user would type. */
function requestArg(arg: unknown, defaults: Partial<SeedRequest>): SeedRequest | undefined {
  if (typeof arg === 'string') {
    const r = parseSeedRequest(arg, defaults);
    if ('error' in r) throw new UserError(r.error);
    return r;
  }
  if (typeof arg === 'object' && arg !== null && 'seeds' in arg && typeof arg.seeds === 'number') {
    const from = 'from' in arg && typeof arg.from === 'number' ? arg.from : undefined;
    const r = parseSeedRequest(`${arg.seeds}${from !== undefined ? ` from ${from}` : ''}`, defaults);
    if ('error' in r) throw new UserError(r.error);
    return r;
  }
  return undefined;
}

export interface SeedsHost {
  workspace(): WorkspaceInfo | undefined;
  /** Shows an events file in the timeline panel under this label. */
  showTimeline(eventsFile: string, label: string): Promise<void>;
}

export class SimSeeds implements vscode.TreeDataProvider<SeedsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<SeedsNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<SeedsNode>;
  private live: LiveRun | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    private readonly host: SeedsHost,
  ) {
    this.view = vscode.window.createTreeView(VIEWS.seeds, { treeDataProvider: this, showCollapseAll: true });
  }

  handlers(): { runSimSeeds: (arg?: unknown) => Promise<void>; replaySeed: (arg?: unknown) => Promise<void>; replayShrunkSeed: (arg?: unknown) => Promise<void> } {
    return {
      runSimSeeds: (arg) => this.run(arg),
      replaySeed: (arg) => this.replay(arg, false),
      replayShrunkSeed: (arg) => this.replay(arg, true),
    };
  }

  /** The workspace changed (or was found): show its runs. */
  refresh(): void {
    this.updateDescription();
    this.changed.fire(undefined);
  }

  /** Stops a run in progress (window closing); resolves once it has stopped (a seed in flight finishes first). */
  async cancel(): Promise<void> {
    this.live?.abort.abort();
    for (let waited = 0; this.live !== undefined && waited < 10_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  }

  dispose(): void {
    this.live?.abort.abort();
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.view.dispose();
    this.changed.dispose();
  }

  // ---- the tree ----

  getChildren(parent?: SeedsNode): SeedsNode[] {
    if (parent === undefined) {
      const runs: SeedsNode[] = this.runs().map((report, i) => ({ kind: 'run', report, newest: i === 0 && this.live === undefined }));
      return this.live ? [{ kind: 'running', live: this.live }, ...runs] : runs;
    }
    if (parent.kind === 'running') return this.seedNodes(parent.live.failures, 'running', parent.live.failures.length, undefined);
    if (parent.kind === 'run') return this.seedNodes(parent.report.failures, parent.report.endedAt, parent.report.verdicts.fail + parent.report.verdicts.error + parent.report.verdicts.timeout, parent.report.scenario);
    return [];
  }

  getTreeItem(node: SeedsNode): vscode.TreeItem {
    switch (node.kind) {
      case 'running': {
        const { live } = node;
        const item = new vscode.TreeItem(`running: ${live.done}/${live.request.seeds} seeds`, vscode.TreeItemCollapsibleState.Expanded);
        item.id = 'running';
        item.description = `${live.failures.length} failed · from seed ${live.request.from}`;
        item.iconPath = new vscode.ThemeIcon('loading~spin');
        item.tooltip = 'Cancel it from its progress notification.';
        item.accessibilityInformation = { label: `running: ${live.done} of ${live.request.seeds} seeds, ${live.failures.length} failed` };
        return item;
      }
      case 'run': {
        const r = node.report;
        const failed = r.failures.length > 0;
        const item = new vscode.TreeItem(describeSeedRun(r), failed && node.newest ? vscode.TreeItemCollapsibleState.Expanded : failed ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
        item.id = `run:${r.endedAt}`;
        item.description = `${r.scenario} · ${ago(r.endedAt)}`;
        item.iconPath = r.cancelled ? new vscode.ThemeIcon('circle-slash') : failed ? new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed')) : new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed'));
        item.tooltip = new vscode.MarkdownString(
          [
            `**${r.bugId}**: \`${r.scenario}\` over seeds ${r.from}..${r.from + Math.max(r.seedsRun, 1) - 1} in simulation`,
            `${r.verdicts.pass} passed, ${r.verdicts.fail} failed, ${r.verdicts.error} errors, ${r.verdicts.timeout} timeouts`,
            `${r.seedsPerSecond.toFixed(1)} seeds per second · ended ${new Date(r.endedAt).toLocaleString()}`,
            'The code may have changed since: replaying a seed runs the code as it is now.',
          ].join('\n\n'),
        );
        item.accessibilityInformation = { label: `${describeSeedRun(r)} · ${r.scenario}` };
        return item;
      }
      case 'seed': {
        const f = node.failure;
        const item = new vscode.TreeItem(`seed ${f.seed}`, vscode.TreeItemCollapsibleState.None);
        item.id = `seed:${node.runId}:${f.seed}`;
        item.description = `${f.verdict}${f.reason !== undefined ? `: ${f.reason}` : ''} · ${(f.virtualMs / 1000).toFixed(3)} s virtual`;
        item.iconPath = new vscode.ThemeIcon(f.verdict === 'fail' ? 'error' : f.verdict === 'timeout' ? 'watch' : 'warning', new vscode.ThemeColor('testing.iconFailed'));
        item.tooltip = `Seed ${f.seed}${node.scenario !== undefined ? ` of ${node.scenario}` : ''}: ${f.verdict}${f.reason !== undefined ? ` — ${f.reason}` : ''}\nEnter or click: replay it in the timeline.`;
        item.contextValue = CONTEXT_VALUES.seed;
        item.accessibilityInformation = { label: `seed ${f.seed} ${f.verdict}${f.reason !== undefined ? `: ${f.reason}` : ''}` };
        item.command = { command: COMMANDS.replaySeed.id, title: COMMANDS.replaySeed.title, arguments: [{ seed: f.seed, ...(node.scenario !== undefined && { scenario: node.scenario }) }] };
        return item;
      }
      case 'more': {
        const item = new vscode.TreeItem(`… ${node.count} more failing seeds`, vscode.TreeItemCollapsibleState.None);
        item.id = `more:${node.runId}`;
        item.tooltip = 'Only the first failing seeds are listed; "Replay Simulated Seed in Timeline…" replays any seed by number.';
        item.command = { command: COMMANDS.replaySeed.id, title: COMMANDS.replaySeed.title };
        item.accessibilityInformation = { label: `${node.count} more failing seeds; replay any by number` };
        return item;
      }
    }
  }

  private seedNodes(failures: readonly SeedFailure[], runId: string, total: number, scenario: string | undefined): SeedsNode[] {
    const nodes: SeedsNode[] = failures.slice(0, LISTED_FAILURES).map((failure) => ({ kind: 'seed', seed: failure.seed, scenario, failure, runId }));
    const listed = Math.min(failures.length, LISTED_FAILURES);
    if (total > listed) nodes.push({ kind: 'more', count: total - listed, runId });
    return nodes;
  }

  // ---- running seeds ----

  private async run(arg: unknown): Promise<void> {
    const workspace = this.requireWorkspace();
    if (this.live) {
      void vscode.window.showInformationMessage('DDBench: simulated seeds are already running in this window; cancel them from their notification first.');
      return;
    }
    const last = this.context.workspaceState.get<SeedRequest>(REQUEST_KEY);
    const request = requestArg(arg, { ...(last && { seeds: last.seeds }) }) ?? (await this.askRequest(last));
    if (request === undefined) return;
    await this.context.workspaceState.update(REQUEST_KEY, request);

    const live: LiveRun = { request, done: 0, failures: [], abort: new AbortController() };
    this.live = live;
    this.refresh();
    await vscode.commands.executeCommand(`${VIEWS.seeds}.focus`);
    this.output.appendLine(`\n=== Simulated seeds of ${workspace.bugId}: ${request.seeds} from seed ${request.from} (${workspace.dir})`);
    let report: SeedRunReport | undefined;
    try {
      report = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `DDBench: simulating ${workspace.bugId}`, cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => live.abort.abort());
          progress.report({ message: `0/${request.seeds} seeds` });
          let reported = 0;
          let lastReport = 0;
          const r = await runSeedReport(workspace.dir, {
            ...request,
            signal: live.abort.signal,
            onSeed: (p, result) => {
              live.done = p.done;
              if (result.verdict !== 'pass') live.failures.push({ seed: result.seed, verdict: result.verdict, ...(result.reason !== undefined && { reason: result.reason }), virtualMs: result.virtualMs });
              const now = Date.now();
              if (now - lastReport >= REFRESH_MS || p.done === p.total) {
                lastReport = now;
                progress.report({ increment: ((p.done - reported) * 100) / p.total, message: `${p.done}/${p.total} seeds · ${p.failed} failed` });
                reported = p.done;
                this.scheduleRefresh();
              }
            },
          });
          return r;
        },
      );
    } finally {
      this.live = undefined;
      this.refresh();
    }
    await this.keep(workspace, report);
    this.refresh();
    this.reportToOutput(report);
    this.announce(report);
  }

  private async askRequest(last: SeedRequest | undefined): Promise<SeedRequest | undefined> {
    const value = last === undefined ? '' : formatSeedRequest(last);
    const text = await vscode.window.showInputBox({
      title: 'Run Simulated Seeds',
      prompt: 'How many seeds, optionally "from" the first seed (default 1): 200, or 200 from 5000. Each seed is one replayable run of the reproducer on virtual time.',
      placeHolder: '100',
      value,
      valueSelection: [0, value.length],
      ignoreFocusOut: true,
      validateInput: (t) => {
        const r = parseSeedRequest(t);
        return 'error' in r ? r.error : undefined;
      },
    });
    if (text === undefined) return undefined;
    const r = parseSeedRequest(text);
    return 'error' in r ? undefined : r;
  }

  private scheduleRefresh(): void {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      this.refresh();
    }, REFRESH_MS);
  }

  private reportToOutput(r: SeedRunReport): void {
    this.output.appendLine(`=== ${r.scenario}: ${describeSeedRun(r)} · ${r.seedsPerSecond.toFixed(1)} seeds/s`);
    for (const f of r.failures.slice(0, 30)) this.output.appendLine(`  seed ${String(f.seed).padStart(6)}  ${f.verdict.toUpperCase().padEnd(7)}  ${f.reason ?? ''}`);
    if (r.failures.length > 30) this.output.appendLine(`  … ${r.failures.length - 30} more (see the Simulated Seeds view)`);
  }

  private announce(r: SeedRunReport): void {
    const first = r.failures[0];
    const message = `DDBench: ${r.bugId}: ${describeSeedRun(r)}`;
    if (first === undefined) {
      void vscode.window.showInformationMessage(message);
      return;
    }
    const replay = `Replay Seed ${first.seed}`;
    void vscode.window.showWarningMessage(message, replay).then((choice) => {
      if (choice === replay) void vscode.commands.executeCommand(COMMANDS.replaySeed.id, { seed: first.seed, scenario: r.scenario });
    });
  }

  // ---- replaying one ----

  private async replay(arg: unknown, shrink: boolean): Promise<void> {
    const workspace = this.requireWorkspace();
    const picked = seedArg(arg) ?? (await this.pickSeed(shrink));
    if (picked === undefined) return;
    const scenario = picked.scenario ?? this.runs()[0]?.scenario;
    const r = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `DDBench: ${shrink ? 'shrinking and replaying' : 'replaying'} seed ${picked.seed}` },
      () => replayWorkspaceSeed(workspace.dir, { seed: picked.seed, ...(scenario !== undefined && { scenario }), shrink }),
    );
    const v = r.result;
    const at = `${(v.virtualMs / 1000).toFixed(3)} s virtual`;
    const shrunk = r.shrunk !== undefined;
    this.output.appendLine(`\n=== Replayed seed ${picked.seed} of ${r.scenario}${shrunk ? ' (shrunk schedule)' : ''}: ${v.verdict === 'pass' ? `passed in ${at}` : `${v.verdict.toUpperCase()} at ${at}`}`);
    if (v.violation) this.output.appendLine(`    where it failed: ${v.violation.check} ${JSON.stringify(v.violation.details)}`);
    else if (v.reason !== undefined) this.output.appendLine(`    reason: ${v.reason}`);
    if (r.shrunk) this.output.appendLine(`    shrunk: the failure needs only ${r.shrunk.keep.length} of the run's random choices (message timings, delivery order, fault draws)${r.shrunk.minimal ? ', each of them' : ''}; every other choice took its plain default`);
    this.output.appendLine(`    events: ${r.eventsFile} (${v.events} events)`);
    this.output.appendLine(`    replay it from the command line: ddbench replay ${workspace.dir} --seed ${picked.seed}${shrunk ? ` --schedule ${r.scheduleFile}` : ''}`);
    const label = `${r.scenario} · simulated seed ${picked.seed}${shrunk ? ' (shrunk)' : ''} · ${v.verdict}${v.reason !== undefined ? `: ${v.reason}` : ''}`;
    await this.host.showTimeline(r.eventsFile, label);
    if (v.verdict === 'pass') void vscode.window.showInformationMessage(`DDBench: seed ${picked.seed} passes on the code as it is now.`);
  }

  /** The newest run's failing seeds, or any seed typed by number. */
  private async pickSeed(shrink: boolean): Promise<{ seed: number; scenario?: string } | undefined> {
    const newest = this.runs()[0];
    type Item = vscode.QuickPickItem & { seed?: number };
    const failing: Item[] = (newest?.failures ?? []).slice(0, LISTED_FAILURES).map((f) => ({
      label: `$(error) seed ${f.seed}`,
      description: `${f.verdict}${f.reason !== undefined ? `: ${f.reason}` : ''}`,
      seed: f.seed,
    }));
    const qp = vscode.window.createQuickPick<Item>();
    qp.title = shrink ? 'Replay a simulated seed, shrunk' : 'Replay a simulated seed in the timeline';
    qp.placeholder = failing.length > 0 ? `A failing seed of the last run (${newest?.scenario ?? ''}), or type any seed number` : 'Type a seed number';
    qp.matchOnDescription = true;
    qp.items = failing;
    const typed = (value: string): Item[] => (/^\d+$/.test(value.trim()) ? [{ label: `$(play) seed ${value.trim()}`, description: 'replay this seed', alwaysShow: true, seed: Number(value.trim()) }] : []);
    qp.onDidChangeValue((value) => {
      qp.items = [...typed(value), ...failing];
    });
    const picked = await new Promise<Item | undefined>((resolve) => {
      qp.onDidAccept(() => resolve(qp.selectedItems[0]));
      qp.onDidHide(() => resolve(undefined));
      qp.show();
    });
    qp.dispose();
    if (picked?.seed === undefined) return undefined;
    return { seed: picked.seed, ...(newest && { scenario: newest.scenario }) };
  }

  // ---- what is kept ----

  private runs(): SeedRunReport[] {
    const dir = this.host.workspace()?.dir;
    if (dir === undefined) return [];
    return (this.context.workspaceState.get<SeedRunReport[]>(STATE_KEY) ?? []).filter((r) => r.dir === dir);
  }

  private async keep(workspace: WorkspaceInfo, report: SeedRunReport): Promise<void> {
    const kept = (this.context.workspaceState.get<SeedRunReport[]>(STATE_KEY) ?? []).filter((r) => r.dir === workspace.dir);
    const trimmed: SeedRunReport = { ...report, failures: report.failures.slice(0, LISTED_FAILURES) };
    await this.context.workspaceState.update(STATE_KEY, [trimmed, ...kept].slice(0, KEPT_RUNS));
  }

  private updateDescription(): void {
    const newest = this.runs()[0];
    this.view.description = this.live ? `running ${this.live.done}/${this.live.request.seeds}` : newest ? `${newest.failures.length} failing` : undefined;
  }

  private requireWorkspace(): WorkspaceInfo {
    const ws = this.host.workspace();
    if (!ws) throw new UserError('this window has no bug workspace open; use "DDBench: Open Bug" first');
    return ws;
  }
}

function ago(iso: string): string {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return new Date(iso).toLocaleDateString();
}
