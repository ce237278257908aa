import * as vscode from 'vscode';
import type { NodeInfo, NodeStatus } from '../core/cluster/types';
import type { ClusterSession } from './clusterSession';
import { COMMANDS, CONTEXT_VALUES } from './commands';

const STATUS_ICONS: Record<NodeStatus, vscode.ThemeIcon> = {
  starting: new vscode.ThemeIcon('loading~spin'),
  running: new vscode.ThemeIcon('pass-filled', new vscode.ThemeColor('testing.iconPassed')),
  paused: new vscode.ThemeIcon('debug-pause', new vscode.ThemeColor('testing.iconQueued')),
  stopped: new vscode.ThemeIcon('circle-slash', new vscode.ThemeColor('disabledForeground')),
  exited: new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed')),
};

/**
 * The Cluster view: one item per node of the running cluster. `contextValue` is
 * `ddbench.node.<status>` (plus `.inspectable`), so the manifest shows only the actions
 * that make sense in that state. With no cluster the tree is empty and the manifest's
 * welcome view offers Launch.
 */
export class ClusterTreeProvider implements vscode.TreeDataProvider<NodeInfo>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private view: vscode.TreeView<NodeInfo> | undefined;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly session: ClusterSession) {
    this.subscription = session.onDidChange(() => {
      this.updateDescription();
      this.changed.fire();
    });
  }

  attach(view: vscode.TreeView<NodeInfo>): void {
    this.view = view;
    this.updateDescription();
  }

  getChildren(parent?: NodeInfo): NodeInfo[] {
    return parent ? [] : this.session.nodes();
  }

  getTreeItem(node: NodeInfo): vscode.TreeItem {
    const isolated = this.isolatedGroup(node.id);
    const item = new vscode.TreeItem(node.id, vscode.TreeItemCollapsibleState.None);
    item.id = `node:${node.id}`;
    item.iconPath = STATUS_ICONS[node.status];
    item.description = [
      node.status,
      node.pid !== undefined ? `pid ${node.pid}` : undefined,
      node.status === 'exited' && node.exitCode !== undefined ? `exit ${String(node.exitCode)}` : undefined,
      isolated ? `partition {${isolated.join(', ')}}` : undefined,
    ]
      .filter((s) => s !== undefined)
      .join(' · ');
    item.tooltip = [
      `${node.id}: ${node.status}`,
      node.pid !== undefined ? `pid ${node.pid}` : undefined,
      node.statePort !== undefined ? `debug-state endpoint http://127.0.0.1:${node.statePort}/` : undefined,
      node.inspectPort !== undefined ? `inspector 127.0.0.1:${node.inspectPort}` : undefined,
    ]
      .filter((s) => s !== undefined)
      .join('\n');
    item.contextValue = `${CONTEXT_VALUES.nodePrefix}${node.status}${node.inspectPort !== undefined ? '.inspectable' : ''}`;
    item.accessibilityInformation = { label: `${node.id} ${node.status}` };
    item.command = { command: COMMANDS.showNode.id, title: COMMANDS.showNode.title, arguments: [node.id] };
    return item;
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }

  /** The partition group a node is in, when the cluster is partitioned. */
  private isolatedGroup(nodeId: string): readonly string[] | undefined {
    return this.session.running?.partition?.find((g) => g.includes(nodeId));
  }

  private updateDescription(): void {
    if (!this.view) return;
    const running = this.session.running;
    if (this.session.isStarting) this.view.description = 'starting…';
    else if (!running) this.view.description = undefined;
    else this.view.description = `${running.workspace.bugId}${running.partition ? ' · partitioned' : ''}`;
  }
}
