import * as vscode from 'vscode';
import { findBug } from '../core/bugs/catalog';
import { readWorkspace, type WorkspaceInfo } from '../core/bugs/workspace';
import type { Cluster, NodeStatus } from '../core/cluster/types';
import { UserError } from '../core/errors';
import { BugsTreeProvider } from './bugsView';
import { CatalogStore } from './catalogStore';
import { ClusterSession } from './clusterSession';
import { ClusterTreeProvider } from './clusterView';
import { COMMANDS, CONTEXT_KEYS, VIEWS, type CommandName } from './commands';
import { attachDebugger, pickIsolated, resolveNode } from './nodeActions';
import { openBug, showPendingIssue } from './openBug';
import { reportError } from './present';
import { runReproducerWithProgress } from './reproducer';
import { parseSettings } from './settings';
import { ClusterStatusBar } from './statusBar';

type Handler = (arg?: unknown) => Promise<void> | void;

/** Kept for deactivate(), which gets no context: the running cluster must not outlive the window. */
let activeSession: ClusterSession | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('DDBench');
  const settings = () => parseSettings((key) => vscode.workspace.getConfiguration().get(key));
  const store = new CatalogStore((problem) => output.appendLine(`[bug set] ${problem}`));
  const session = new ClusterSession();
  activeSession = session;
  let bugWorkspace: WorkspaceInfo | undefined;

  const bugsTree = new BugsTreeProvider(store, () => bugWorkspace?.bugId);
  const bugsView = vscode.window.createTreeView(VIEWS.bugs, { treeDataProvider: bugsTree, showCollapseAll: true });
  bugsTree.attach(bugsView);
  const clusterTree = new ClusterTreeProvider(session);
  const clusterView = vscode.window.createTreeView(VIEWS.cluster, { treeDataProvider: clusterTree });
  clusterTree.attach(clusterView);
  const statusBar = new ClusterStatusBar(session, () => bugWorkspace);
  context.subscriptions.push(output, store, session, bugsTree, bugsView, clusterTree, clusterView, statusBar);

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
    openBug: (arg) => openBug(context, store, settings, arg),
    refreshBugs: () => store.refresh(),
    launchCluster: async () => {
      const workspace = requireWorkspace();
      const inspect = settings().inspect;
      const running = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `DDBench: launching the ${workspace.bugId} cluster` },
        () => session.launch(workspace, { inspect }),
      );
      output.appendLine(`[cluster] launched ${workspace.bugId}: ${session.nodes().map((n) => n.id).join(', ')}; run folder ${running.cluster.runDir}`);
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
      const trials = s.trials ?? findBug(await store.get(), workspace.bugId).manifest.reproducer.trials;
      await runReproducerWithProgress(output, { workspace, trials, concurrency: s.concurrency });
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
  };
  for (const name of Object.keys(handlers) as CommandName[]) {
    const spec = COMMANDS[name];
    const handler = handlers[name];
    context.subscriptions.push(
      vscode.commands.registerCommand(spec.id, async (arg?: unknown) => {
        try {
          await handler(arg);
        } catch (err) {
          reportError(output, spec.title, err);
        }
      }),
    );
  }

  context.subscriptions.push(
    session.onDidChange(() => void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.clusterRunning, session.running !== undefined)),
    vscode.workspace.onDidChangeWorkspaceFolders(() => void detectWorkspace()),
  );

  /** The first workspace folder that is a bug workspace drives launch, reproducer and the status bar. */
  async function detectWorkspace(): Promise<void> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    const found = await Promise.all(folders.map((f) => readWorkspace(f.uri.fsPath).catch(() => undefined)));
    bugWorkspace = found.find((w) => w !== undefined);
    await vscode.commands.executeCommand('setContext', CONTEXT_KEYS.inBugWorkspace, bugWorkspace !== undefined);
    statusBar.update();
    bugsTree.refresh();
    if (bugWorkspace) await showPendingIssue(context, bugWorkspace.dir);
  }
  void detectWorkspace().catch((err: unknown) => reportError(output, 'Detecting the bug workspace', err));
}

export function deactivate(): Promise<void> | undefined {
  const session = activeSession;
  activeSession = undefined;
  return session?.stop();
}
