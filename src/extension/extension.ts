import * as vscode from 'vscode';
import { readWorkspace, type WorkspaceInfo } from '../core/bugs/workspace';
import { DDBENCH_DIR } from '../core/paths';
import type { Cluster, NodeInfo, NodeStatus } from '../core/cluster/types';
import { UserError } from '../core/errors';
import { BugsTreeProvider, pickBugsFilter, type BugsNode } from './bugsView';
import { CatalogStore } from './catalogStore';
import { ClusterSession } from './clusterSession';
import { ClusterTreeProvider } from './clusterView';
import { COMMANDS, CONTEXT_KEYS, VIEWS, type CommandName } from './commands';
import { attachDebugger, pickIsolated, resolveNode } from './nodeActions';
import { openBug, showIssue, showPendingIssue } from './openBug';
import { reportError } from './present';
import { createRedactingOutputChannel } from './redactingOutput';
import { ReproducerRuns } from './reproducer';
import { parseSettings } from './settings';
import { ClusterStatusBar } from './statusBar';
import { TimelinePanel } from './timelinePanel';
import { AgentPanel } from './agentPanel';
import { ComparisonView } from './comparisonView';
import { StudySession } from './studyAttempt';
import { parseStudySettings } from './studySettings';
import { SimSeeds } from './simSeeds';
import { completeStep } from './walkthrough';
import { Practice } from './practice';
import { ClusterConsole } from './clusterConsole';
import { NodeDocuments } from './nodeDocuments';

type Handler = (arg?: unknown) => Promise<void> | void;

/** Kept for deactivate(), which gets no context: nothing the window started may outlive it. */
let running: { session: ClusterSession; reproducers: ReproducerRuns; agent?: AgentPanel; seeds?: SimSeeds } | undefined;

/** What activate() returns: the trees, so the @vscode/test-electron suite can read what the views show. */
export interface DDBenchApi {
  readonly bugsTree: vscode.TreeDataProvider<BugsNode>;
  readonly clusterTree: vscode.TreeDataProvider<NodeInfo>;
}

export function activate(context: vscode.ExtensionContext): DDBenchApi {
  const output = createRedactingOutputChannel('DDBench');
  const settings = () => parseSettings((key) => vscode.workspace.getConfiguration().get(key));
  const store = new CatalogStore((problem) => output.appendLine(`[bug set] ${problem}`));
  const session = new ClusterSession();

  let bugWorkspace: WorkspaceInfo | undefined;

  const bugsTree = new BugsTreeProvider({
    store,
    openBugId: () => bugWorkspace?.bugId,
    openWorkspaceDir: () => bugWorkspace?.dir,
    workspacesDir: () => settings().workspacesDir,
    memento: context.workspaceState,
  });
  const bugsView = vscode.window.createTreeView(VIEWS.bugs, { treeDataProvider: bugsTree, showCollapseAll: true });
  bugsTree.attach(bugsView);
  const clusterTree = new ClusterTreeProvider(session);
  const clusterView = vscode.window.createTreeView(VIEWS.cluster, { treeDataProvider: clusterTree });
  clusterTree.attach(clusterView);
  const statusBar = new ClusterStatusBar(session, () => bugWorkspace);
  const timeline = new TimelinePanel(context, output, session, () => bugWorkspace);
  const reproducers = new ReproducerRuns(output, timeline);
  running = { session, reproducers };
  // The study session is made below; the panel asks it only when Start is pressed.
  const agent = new AgentPanel(context, output, () => bugWorkspace, () => study.agentRefusal());
  running.agent = agent;
  context.subscriptions.push(agent);
  context.subscriptions.push(output, store, session, bugsTree, bugsView, clusterTree, clusterView, statusBar, timeline);
  const seeds = new SimSeeds(context, output, { workspace: () => bugWorkspace, showTimeline: (file, label) => timeline.showFiles([file], label) });
  running.seeds = seeds;
  context.subscriptions.push(seeds);

  const study = new StudySession(context, output, () => store.get(), settings, () => parseStudySettings((key) => vscode.workspace.getConfiguration().get(key)), timeline);
  const clusterConsole = new ClusterConsole(session, () => store.get(), output, context.workspaceState);
  const nodeDocuments = new NodeDocuments(session);
  context.subscriptions.push(clusterConsole, nodeDocuments);
  const practice = new Practice(output, () => bugWorkspace, settings, timeline, () => study.inProgress, () => bugsTree.refresh());
  const comparison = new ComparisonView(context, output, () => store.get(), () => bugWorkspace, study);
  context.subscriptions.push(study, comparison);

  const requireWorkspace = (): WorkspaceInfo => {
    if (!bugWorkspace) throw new UserError('this window has no bug workspace open; use "DDBench: Open Bug" first');
    return bugWorkspace;
  };
  const onNode = (action: string, fits: (s: NodeStatus) => boolean, act: (cluster: Cluster, id: string) => Promise<void>): Handler => {
    return async (arg) => {
      const node = await resolveNode(session, arg, action, fits);
      if (!node) return;
      await session.act((cluster) => act(cluster, node.id));
      output.appendLine(`[cluster] ${action.toLowerCase()}: ${node.id}`);
    };
  };

  const handlers: Record<CommandName, Handler> = {
    ...study.handlers(),
    ...practice.handlers(),
    ...seeds.handlers(),
    showComparison: () => comparison.showWorkspace(),
    compareRecordsFolder: () => comparison.pickFolders(),
    openBug: (arg) => openBug(context, store, settings, arg),
    refreshBugs: () => store.refresh(),
    filterBugs: async () => pickBugsFilter(bugsTree, await store.get()),
    groupBugs: () => bugsTree.setFilter({ ...bugsTree.filter, groupBy: bugsTree.filter.groupBy === 'system' ? 'tier' : 'system' }),
    showIssue: () => showIssue(requireWorkspace().dir),
    openNextBug: async () => {
      const bug = await bugsTree.suggestion();
      if (!bug) return void vscode.window.showInformationMessage('DDBench: every bug of the set is solved. Well done.');
      await openBug(context, store, settings, bug.id);
    },
    launchCluster: async () => {
      const workspace = requireWorkspace();
      const { inspect, backend } = settings();
      const running = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `DDBench: launching the ${workspace.bugId} cluster` },
        () => session.launch(workspace, { inspect, backend }),
      );
      output.appendLine(`[cluster] launched ${workspace.bugId}: ${session.nodes().map((n) => n.id).join(', ')}; run folder ${running.cluster.runDir}`);
      completeStep('clusterLaunched');
      await vscode.commands.executeCommand(`${VIEWS.cluster}.focus`);
    },
    stopCluster: async () => {
      if (!session.running) return;
      await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'DDBench: stopping the cluster' }, () => session.stop());
      output.appendLine('[cluster] stopped');
    },
    runReproducer: async () => {
      const workspace = requireWorkspace();
      const s = settings();
      if (await reproducers.run({ workspace, trials: s.trials, concurrency: s.concurrency, backend: s.backend })) completeStep('reproducerRan');
    },
    killNode: onNode('Kill', (s) => s !== 'stopped' && s !== 'exited', (c, id) => c.kill(id)),
    restartNode: onNode('Restart', () => true, (c, id) => c.restart(id)),
    pauseNode: onNode('Pause', (s) => s === 'running', (c, id) => c.pause(id)),
    resumeNode: onNode('Resume', (s) => s === 'paused', (c, id) => c.resume(id)),
    attachDebugger: async (arg) => {
      const node = await resolveNode(session, arg, 'Attach Debugger', (s) => s === 'running' || s === 'paused');
      if (node) await attachDebugger(node);
    },
    partition: async (arg) => {
      const isolated = await pickIsolated(session, arg);
      if (!isolated) return;
      session.isolate(isolated);
      output.appendLine(`[cluster] partition: {${isolated.join(', ')}} cut off from the rest`);
    },
    heal: () => {
      session.heal();
      output.appendLine('[cluster] partition healed');
    },
    sendRequest: (arg) => clusterConsole.sendRequest(arg),
    addLinkFault: (arg) => clusterConsole.addLinkFault(arg),
    clearLinkFaults: () => clusterConsole.clearLinkFaults(),
    showNode: async (arg) => {
      const node = await resolveNode(session, arg, 'Show', () => true);
      if (node) await nodeDocuments.open(node.id);
    },
    showTimeline: async (arg) => {
      await timeline.showLatest(arg);
      completeStep('timelineShown');
    },
    showTrialTimeline: () => timeline.pickTrial(),
    showFileTimeline: (arg) => (arg === undefined ? timeline.pickFiles() : timeline.showLatest(arg)),
    openAgent: () => agent.show(),
    setAgentApiKey: () => agent.setKey(),
    clearAgentApiKey: () => agent.clearKey(),
    acceptAgentPatch: (arg) => agent.reviewFromEditor('accepted', arg),
    rejectAgentPatch: (arg) => agent.reviewFromEditor('rejected', arg),
  };
  for (const name of Object.keys(handlers) as CommandName[]) {
    const spec = COMMANDS[name];
    const handler = handlers[name];
    context.subscriptions.push(
      vscode.commands.registerCommand(spec.id, async (arg?: unknown) => {
        try {
          // A study logs each command during an attempt, and may refuse the agent's.
          if (!study.beforeCommand(name)) return;
          await handler(arg);
        } catch (err) {
          reportError(output, spec.title, err);
        }
      }),
    );
  }

  context.subscriptions.push(
    session.onDidChange(() => void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.clusterRunning, session.running !== undefined)),
    vscode.workspace.onDidChangeWorkspaceFolders(redetect),
  );
  // A workspace materialised into an open folder (Open Bug there, or `ddbench open` in the terminal) counts at once.
  const marker = vscode.workspace.createFileSystemWatcher(`**/${DDBENCH_DIR}/workspace.json`);
  context.subscriptions.push(marker, marker.onDidCreate(redetect), marker.onDidDelete(redetect));

  /** The first workspace folder that is a bug workspace drives launch, reproducer and the status bar. */
  async function detectWorkspace(): Promise<void> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    const found = await Promise.all(folders.map((f) => readWorkspace(f.uri.fsPath).catch(() => undefined)));
    bugWorkspace = found.find((w) => w !== undefined);
    study.setWorkspace(bugWorkspace);
    await vscode.commands.executeCommand('setContext', CONTEXT_KEYS.inBugWorkspace, bugWorkspace !== undefined);
    statusBar.update();
    bugsTree.refresh();
    seeds.refresh();
    if (bugWorkspace) await showPendingIssue(context, bugWorkspace.dir);
  }
  function redetect(): void {
    detectWorkspace().catch((err: unknown) => reportError(output, 'Detecting the bug workspace', err));
  }
  redetect();
  return { bugsTree, clusterTree };
}

export async function deactivate(): Promise<void> {
  const current = running;
  running = undefined;
  if (current) await Promise.allSettled([current.session.stop(), current.reproducers.cancelAll(), current.agent?.stop(), current.seeds?.cancel()]);
}
