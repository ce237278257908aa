import * as path from 'node:path';
import * as vscode from 'vscode';
import type { BugEntry, Catalog, SystemEntry } from '../core/bugs/catalog';
import type { CatalogStore } from './catalogStore';
import { CONTEXT_VALUES } from './commands';
import { errorMessage } from './present';

export type BugsNode = { kind: 'system'; system: SystemEntry; bugs: BugEntry[] } | { kind: 'bug'; bug: BugEntry };

/** The Bugs view: the catalogue grouped by system; a bug's context menu opens it. */
export class BugsTreeProvider implements vscode.TreeDataProvider<BugsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private view: vscode.TreeView<BugsNode> | undefined;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly store: CatalogStore,
    /** The bug of the open workspace, marked in the tree. */
    private readonly openBugId: () => string | undefined,
  ) {
    this.subscription = store.onDidChange(() => this.changed.fire());
  }

  attach(view: vscode.TreeView<BugsNode>): void {
    this.view = view;
  }

  refresh(): void {
    this.changed.fire();
  }

  async getChildren(parent?: BugsNode): Promise<BugsNode[]> {
    if (parent?.kind === 'system') return parent.bugs.map((bug) => ({ kind: 'bug', bug }));
    if (parent) return [];
    let catalog: Catalog;
    try {
      catalog = await this.store.get();
    } catch (err) {
      this.setMessage(`Cannot load the bug set: ${errorMessage(err)}`);
      return [];
    }
    this.setMessage(
      catalog.problems.length > 0
        ? `${catalog.problems.length} manifest(s) could not be loaded; see Output › DDBench.`
        : undefined,
    );
    return catalog.systems
      .map((system) => ({ kind: 'system' as const, system, bugs: catalog.bugs.filter((b) => b.system === system.id) }))
      .filter((s) => s.bugs.length > 0);
  }

  getTreeItem(node: BugsNode): vscode.TreeItem {
    return node.kind === 'system' ? systemItem(node.system, node.bugs.length) : bugItem(node.bug, node.bug.id === this.openBugId());
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }

  private setMessage(message: string | undefined): void {
    if (this.view) this.view.message = message;
  }
}

function systemItem(system: SystemEntry, count: number): vscode.TreeItem {
  const item = new vscode.TreeItem(system.manifest.name, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `system:${system.id}`;
  item.description = `${count} bug${count === 1 ? '' : 's'} · like ${system.manifest.modelledAfter.project}`;
  item.tooltip = new vscode.MarkdownString(
    `**${md(system.manifest.name)}** (${md(system.id)})\n\n${md(system.manifest.description)}\n\n` +
      `Modelled after [${md(system.manifest.modelledAfter.project)}](${system.manifest.modelledAfter.url})`,
  );
  item.iconPath = new vscode.ThemeIcon('server-environment');
  item.contextValue = CONTEXT_VALUES.system;
  return item;
}

function bugItem(bug: BugEntry, isOpen: boolean): vscode.TreeItem {
  const item = new vscode.TreeItem(bug.id, vscode.TreeItemCollapsibleState.None);
  item.id = `bug:${bug.id}`;
  item.description = `${isOpen ? 'open · ' : ''}tier ${bug.tier} · ${bug.difficulty} · ${bug.categories.join(', ')}`;
  item.tooltip = new vscode.MarkdownString(
    `**${md(bug.title)}**\n\n` +
      `\`${bug.id}\` · system ${md(bug.system)} · tier ${bug.tier} (${bug.difficulty})\n\n` +
      `Categories: ${bug.categories.map(md).join(', ')}\n\n` +
      `Modelled after [${md(bug.modelledAfter.project)} ${md(bug.modelledAfter.id)}](${bug.modelledAfter.url})`,
  );
  item.iconPath = new vscode.ThemeIcon(isOpen ? 'debug-breakpoint-log' : 'bug');
  item.contextValue = CONTEXT_VALUES.bug;
  item.accessibilityInformation = { label: `${bug.id}: ${bug.title}, tier ${bug.tier}, ${bug.difficulty}` };
  // A click previews the report (symptom only, safe to show); opening the workspace is an explicit action.
  item.command = { command: 'markdown.showPreview', title: 'Preview Issue', arguments: [vscode.Uri.file(path.join(bug.dir, 'ISSUE.md'))] };
  return item;
}

/** Escapes text from manifests for a MarkdownString. */
function md(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|]/g, '\\$&');
}
