import * as vscode from 'vscode';
import type { WorkspaceInfo } from '../core/bugs/workspace';
import type { ClusterSession } from './clusterSession';
import { COMMANDS, VIEWS } from './commands';

/**
 * "$(server-process) raftkv 3/3 running" while a cluster runs; in a bug workspace with
 * no cluster it offers Launch. Clicking focuses the Cluster view.
 */
export class ClusterStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('ddbench.cluster', vscode.StatusBarAlignment.Left, 50);
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly session: ClusterSession,
    private readonly workspace: () => WorkspaceInfo | undefined,
  ) {
    this.item.name = 'DDBench Cluster';
    this.item.command = `${VIEWS.cluster}.focus`;
    this.subscription = session.onDidChange(() => this.update());
    this.update();
  }

  update(): void {
    const running = this.session.running;
    const workspace = running?.workspace ?? this.workspace();
    if (!workspace) {
      this.item.hide();
      return;
    }
    if (this.session.isStarting) {
      this.item.text = `$(loading~spin) ${workspace.system} starting`;
      this.item.tooltip = `Launching the ${workspace.bugId} cluster`;
    } else if (running) {
      const nodes = this.session.nodes();
      const up = nodes.filter((n) => n.status === 'running').length;
      this.item.text = `$(server-process) ${workspace.system} ${up}/${nodes.length} running${running.partition ? ' $(debug-disconnect)' : ''}`;
      this.item.tooltip = `${workspace.bugId}: ${nodes.map((n) => `${n.id} ${n.status}`).join(', ')}${running.partition ? ' (partitioned)' : ''}`;
    } else {
      this.item.text = `$(server-process) ${workspace.system} stopped`;
      this.item.tooltip = `No cluster running for ${workspace.bugId}; use ${COMMANDS.launchCluster.title} in the Cluster view`;
    }
    this.item.show();
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
