import * as path from 'node:path';
import * as vscode from 'vscode';
import { z } from 'zod';
import type { BugEntry, Catalog, SystemEntry } from '../core/bugs/catalog';
import { upstreamMissing } from '../core/bugs/upstream-installed';
import { catalogProgress, nextBug, type BugProgress, type BugState } from '../core/study/progress';
import type { CatalogStore } from './catalogStore';
import { COMMANDS, CONTEXT_VALUES } from './commands';
import { errorMessage } from './present';

export type BugsNode =
  | { kind: 'system'; system: SystemEntry; bugs: BugEntry[] }
  | { kind: 'tier'; tier: 1 | 2 | 3; bugs: BugEntry[] }
  | { kind: 'upstream'; systems: SystemEntry[]; bugs: BugEntry[] }
  | { kind: 'next'; bug: BugEntry }
  | { kind: 'bug'; bug: BugEntry };

/** How the view groups and which bugs it shows; kept per window across reloads. */
export const BugsFilter = z.object({
  groupBy: z.enum(['system', 'tier']).default('system'),
  tiers: z.array(z.union([z.literal(1), z.literal(2), z.literal(3)])).default([]),
  states: z.array(z.enum(['not-tried', 'attempted', 'solved'])).default([]),
  systems: z.array(z.string()).default([]),
});
export type BugsFilter = z.infer<typeof BugsFilter>;
const FILTER_KEY = 'ddbench.bugsFilter';

const STATE_WORDS: Record<BugState, string> = { 'not-tried': 'not tried', attempted: 'attempted', solved: 'solved' };

export interface BugsViewSources {
  store: CatalogStore;
  /** The bug of the open workspace, marked in the tree. */
  openBugId: () => string | undefined;
  /** Workspaces whose progress counts: the open one (wherever it is). */
  openWorkspaceDir: () => string | undefined;
  /** Where `Open Bug` puts workspaces: `<dir>/<bug id>`. */
  workspacesDir: () => string;
  memento: vscode.Memento;
}

/**
 * The Bugs view for practice: bugs by their titles (ids in the tooltip), grouped by
 * system or tier, each with its tier and where the person stands on it (not tried,
 * attempted, solved with the best time), a filter by tier, status and system, and
 * the suggested next bug on top. A bug's click previews its issue report.
 */
export class BugsTreeProvider implements vscode.TreeDataProvider<BugsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private view: vscode.TreeView<BugsNode> | undefined;
  private readonly subscription: vscode.Disposable;
  private progress = new Map<string, BugProgress>();

  constructor(private readonly sources: BugsViewSources) {
    this.subscription = sources.store.onDidChange(() => this.changed.fire());
  }

  attach(view: vscode.TreeView<BugsNode>): void {
    this.view = view;
  }

  refresh(): void {
    this.changed.fire();
  }

  get filter(): BugsFilter {
    return BugsFilter.parse(this.sources.memento.get(FILTER_KEY) ?? {});
  }

  async setFilter(filter: BugsFilter): Promise<void> {
    await this.sources.memento.update(FILTER_KEY, filter);
    this.refresh();
  }

  /** The bug the view suggests next (also the walkthrough's first bug). */
  async suggestion(): Promise<BugEntry | undefined> {
    const catalog = await this.sources.store.get();
    return nextBug(catalog, await this.loadProgress(catalog));
  }

  async getChildren(parent?: BugsNode): Promise<BugsNode[]> {
    if (parent?.kind === 'system' || parent?.kind === 'tier' || parent?.kind === 'upstream') return parent.bugs.map((bug) => ({ kind: 'bug', bug }));
    if (parent) return [];
    let catalog: Catalog;
    try {
      catalog = await this.sources.store.get();
    } catch (err) {
      this.setMessage(`Cannot load the bug set: ${errorMessage(err)}`);
      return [];
    }
    this.progress = await this.loadProgress(catalog);
    const filter = this.filter;
    const shown = catalog.bugs.filter((b) => this.passes(b, filter)).sort((a, b) => a.tier - b.tier || a.title.localeCompare(b.title));
    const problems = catalog.problems.length > 0 ? `${catalog.problems.length} manifest(s) could not be loaded; see Output › DDBench. ` : '';
    const hidden = catalog.bugs.length - shown.length;
    this.setMessage(problems + (hidden > 0 ? `${shown.length} of ${catalog.bugs.length} bugs shown (${filterWords(filter)}). "${COMMANDS.filterBugs.title}" changes it.` : '') || undefined);
    if (this.view) this.view.description = solvedLine(catalog, this.progress);
    const next = nextBug(catalog, this.progress);
    const miniatures = shown.filter((b) => b.kind === 'miniature');
    const groups: Extract<BugsNode, { bugs: BugEntry[] }>[] =
      filter.groupBy === 'tier'
        ? ([1, 2, 3] as const).map((tier) => ({ kind: 'tier' as const, tier, bugs: miniatures.filter((b) => b.tier === tier) }))
        : catalog.systems.map((system) => ({ kind: 'system' as const, system, bugs: miniatures.filter((b) => b.system === system.id) }));
    // The pilot tier in real upstream code is a group of its own, last, whatever the grouping.
    groups.push({ kind: 'upstream', systems: catalog.systems.filter((s) => s.kind === 'upstream'), bugs: shown.filter((b) => b.kind === 'upstream') });
    return [...(next ? [{ kind: 'next' as const, bug: next }] : []), ...groups.filter((g) => g.bugs.length > 0)];
  }

  getTreeItem(node: BugsNode): vscode.TreeItem {
    switch (node.kind) {
      case 'system':
        return systemItem(node.system, node.bugs.length);
      case 'tier':
        return tierItem(node.tier, node.bugs.length);
      case 'upstream':
        return upstreamItem(node.systems, node.bugs.length);
      case 'next':
        return nextItem(node.bug);
      case 'bug':
        return bugItem(node.bug, node.bug.id === this.sources.openBugId(), this.progress.get(node.bug.id) ?? { state: 'not-tried', hints: 0 });
    }
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }

  private passes(bug: BugEntry, f: BugsFilter): boolean {
    const state = this.progress.get(bug.id)?.state ?? 'not-tried';
    return (f.tiers.length === 0 || f.tiers.includes(bug.tier)) && (f.states.length === 0 || f.states.includes(state)) && (f.systems.length === 0 || f.systems.includes(bug.system));
  }

  private loadProgress(catalog: Catalog): Promise<Map<string, BugProgress>> {
    const open = this.sources.openWorkspaceDir();
    return catalogProgress(catalog, this.sources.workspacesDir(), open ? [open] : []);
  }

  private setMessage(message: string | undefined): void {
    if (this.view) this.view.message = message;
  }
}

function solvedLine(catalog: Catalog, progress: ReadonlyMap<string, BugProgress>): string {
  const solved = catalog.bugs.filter((b) => progress.get(b.id)?.state === 'solved').length;
  return `${solved}/${catalog.bugs.length} solved`;
}

function filterWords(f: BugsFilter): string {
  return [
    ...(f.tiers.length > 0 ? [`tier ${f.tiers.join(', ')}`] : []),
    ...(f.states.length > 0 ? [f.states.map((s) => STATE_WORDS[s]).join(' or ')] : []),
    ...(f.systems.length > 0 ? [f.systems.join(', ')] : []),
  ].join(' · ');
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

/** The pilot group: what it is, and what each real system needs installed before its bugs run. */
function upstreamItem(systems: SystemEntry[], count: number): vscode.TreeItem {
  const item = new vscode.TreeItem('Real upstream code (pilot)', vscode.TreeItemCollapsibleState.Expanded);
  item.id = 'upstream';
  const missing = systems.filter((s) => upstreamMissing(s) !== undefined);
  item.description = `${count} bug${count === 1 ? '' : 's'} · ${missing.length > 0 ? `needs set-up: ${missing.map((s) => s.id).join(', ')}` : 'installed'}`;
  const lines = systems.map((s) => {
    const spec = s.manifest.upstream;
    const needs = spec ? `Debian packages ${spec.debian.packages.map((p) => `\`${p}\``).join(', ')}; source ${md(spec.debian.source.package)} ${md(spec.debian.source.version)}` : '';
    return `- **${md(s.manifest.name)}**: ${upstreamMissing(s) === undefined ? 'installed' : 'not installed'}. ${needs}`;
  });
  item.tooltip = new vscode.MarkdownString(
    'Bugs in the real code of the upstream projects, built from Debian\'s sources and run as real clusters: live trials only (no simulated seeds), and a build before each verification.\n\n' +
      `${lines.join('\n')}\n\n` +
      'Install them (as root): `sudo ddbench setup upstream`',
  );
  item.iconPath = new vscode.ThemeIcon('package');
  return item;
}

const TIER_WORDS = { 1: 'message faults only', 2: 'one kind of node fault', 3: 'node faults combined across a failover' } as const;

function tierItem(tier: 1 | 2 | 3, count: number): vscode.TreeItem {
  const item = new vscode.TreeItem(`Tier ${tier}`, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `tier:${tier}`;
  item.description = `${count} bug${count === 1 ? '' : 's'} · ${TIER_WORDS[tier]}`;
  item.iconPath = new vscode.ThemeIcon(`circle-large-outline`);
  return item;
}

function nextItem(bug: BugEntry): vscode.TreeItem {
  const item = new vscode.TreeItem(`Next: ${bug.title}`, vscode.TreeItemCollapsibleState.None);
  item.id = 'next';
  item.description = `tier ${bug.tier} · ${bug.system}`;
  item.tooltip = new vscode.MarkdownString(`**Suggested next bug**: ${md(bug.title)}\n\n\`${bug.id}\` · tier ${bug.tier}\n\nClick to open its workspace.`);
  item.iconPath = new vscode.ThemeIcon('star-full', new vscode.ThemeColor('charts.yellow'));
  item.command = { command: COMMANDS.openBug.id, title: COMMANDS.openBug.title, arguments: [bug.id] };
  item.accessibilityInformation = { label: `Suggested next bug: ${bug.title}, tier ${bug.tier}` };
  return item;
}

const STATE_ICON: Record<BugState, vscode.ThemeIcon> = {
  'not-tried': new vscode.ThemeIcon('bug'),
  attempted: new vscode.ThemeIcon('circle-large-outline', new vscode.ThemeColor('charts.yellow')),
  solved: new vscode.ThemeIcon('pass-filled', new vscode.ThemeColor('charts.green')),
};

function bugItem(bug: BugEntry, isOpen: boolean, progress: BugProgress): vscode.TreeItem {
  const item = new vscode.TreeItem(bug.title, vscode.TreeItemCollapsibleState.None);
  item.id = `bug:${bug.id}`;
  const state = progress.state === 'solved' && progress.bestTimeMs !== undefined ? `solved in ${clock(progress.bestTimeMs)}` : STATE_WORDS[progress.state];
  item.description = `${isOpen ? 'open · ' : ''}T${bug.tier}${bug.kind === 'upstream' ? ' · real code' : ''} · ${state}${progress.hints > 0 ? ` · ${progress.hints} hint${progress.hints === 1 ? '' : 's'}` : ''}`;
  item.tooltip = new vscode.MarkdownString(
    `**${md(bug.title)}**\n\n` +
      `\`${bug.id}\` · system ${md(bug.system)} · tier ${bug.tier} (${bug.difficulty}) · ${md(state)}\n\n` +
      `Categories: ${bug.categories.map(md).join(', ')}\n\n` +
      `Modelled after [${md(bug.modelledAfter.project)} ${md(bug.modelledAfter.id)}](${bug.modelledAfter.url})`,
  );
  item.iconPath = isOpen ? new vscode.ThemeIcon('debug-breakpoint-log') : STATE_ICON[progress.state];
  item.contextValue = CONTEXT_VALUES.bug;
  item.accessibilityInformation = { label: `${bug.id}: ${bug.title}, tier ${bug.tier}, ${bug.difficulty}, ${state}` };
  // A click previews the report (symptom only, safe to show); opening the workspace is an explicit action.
  item.command = { command: 'markdown.showPreview', title: 'Preview Issue', arguments: [vscode.Uri.file(path.join(bug.dir, 'ISSUE.md'))] };
  return item;
}

function clock(ms: number): string {
  const m = Math.round(ms / 60_000);
  return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** Escapes text from manifests for a MarkdownString. */
function md(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|]/g, '\\$&');
}

/** The filter as a multi-select quick pick: tiers, states and systems; nothing picked in a group means all of it. */
export async function pickBugsFilter(tree: BugsTreeProvider, catalog: Catalog): Promise<void> {
  const f = tree.filter;
  type Item = vscode.QuickPickItem & { apply?: (into: BugsFilter) => void };
  const items: Item[] = [
    { label: 'Tier', kind: vscode.QuickPickItemKind.Separator },
    ...([1, 2, 3] as const).map((tier): Item => ({ label: `Tier ${tier}`, description: TIER_WORDS[tier], picked: f.tiers.includes(tier), apply: (into) => into.tiers.push(tier) })),
    { label: 'Status', kind: vscode.QuickPickItemKind.Separator },
    ...(['not-tried', 'attempted', 'solved'] as const).map((state): Item => ({ label: STATE_WORDS[state], picked: f.states.includes(state), apply: (into) => into.states.push(state) })),
    { label: 'System', kind: vscode.QuickPickItemKind.Separator },
    ...catalog.systems.map((s): Item => ({ label: s.manifest.name, description: s.id, picked: f.systems.includes(s.id), apply: (into) => into.systems.push(s.id) })),
  ];
  const picked = await vscode.window.showQuickPick(items, { canPickMany: true, title: 'Show which bugs? (none picked in a group: all of it)', matchOnDescription: true });
  if (!picked) return;
  const next: BugsFilter = { groupBy: f.groupBy, tiers: [], states: [], systems: [] };
  for (const item of picked) item.apply?.(next);
  await tree.setFilter(next);
}
