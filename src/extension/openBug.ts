import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { z } from 'zod';
import { findBug, type BugEntry, type Catalog } from '../core/bugs/catalog';
import { openWorkspace, readWorkspace } from '../core/bugs/workspace';
import type { CatalogStore } from './catalogStore';
import { SETTINGS, type DDBenchSettings } from './settings';

/** What Open Bug accepts: a bug id (palette, keybindings, other extensions) or a Bugs view item. */
const OpenBugArg = z.union([z.string().min(1), z.object({ kind: z.literal('bug'), bug: z.object({ id: z.string() }) })]);

/** Remembers the folder just created, so the window that opens it shows ISSUE.md first. */
export const PENDING_ISSUE_KEY = 'ddbench.pendingIssue';

export async function openBug(
  context: vscode.ExtensionContext,
  store: CatalogStore,
  settings: () => DDBenchSettings,
  arg: unknown,
): Promise<void> {
  const catalog = await store.get();
  const bugId = arg === undefined ? await pickBug(catalog) : idOf(arg);
  if (!bugId) return;
  const bug = findBug(catalog, bugId);
  const workspacesDir = await workspacesDirFor(settings());
  if (!workspacesDir) return;
  const target = await chooseTarget(workspacesDir, bug);
  if (!target) return;
  if (target.create) {
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `DDBench: creating the ${bug.id} workspace` },
      () => openWorkspace(catalog, bug.id, target.dir),
    );
  }
  const uri = vscode.Uri.file(target.dir);
  if (vscode.workspace.workspaceFolders?.some((f) => f.uri.fsPath === uri.fsPath)) {
    await showIssue(target.dir);
    return;
  }
  if (target.create) await context.globalState.update(PENDING_ISSUE_KEY, target.dir);
  await vscode.commands.executeCommand('vscode.openFolder', uri, { forceNewWindow: false });
}

/** In a window that opened a freshly created workspace, shows its issue report once. */
export async function showPendingIssue(context: vscode.ExtensionContext, workspaceDir: string): Promise<void> {
  if (context.globalState.get<string>(PENDING_ISSUE_KEY) !== workspaceDir) return;
  await context.globalState.update(PENDING_ISSUE_KEY, undefined);
  await showIssue(workspaceDir);
}

export async function showIssue(dir: string): Promise<void> {
  const issue = vscode.Uri.file(path.join(dir, 'ISSUE.md'));
  if (fs.existsSync(issue.fsPath)) await vscode.commands.executeCommand('markdown.showPreview', issue);
}

function idOf(arg: unknown): string {
  const parsed = OpenBugArg.safeParse(arg);
  if (!parsed.success) throw new Error(`Open Bug expects a bug id or a Bugs view item, got ${JSON.stringify(arg)}`);
  return typeof parsed.data === 'string' ? parsed.data : parsed.data.bug.id;
}

async function pickBug(catalog: Catalog): Promise<string | undefined> {
  if (catalog.bugs.length === 0) {
    void vscode.window.showWarningMessage(`DDBench: the bug set at ${catalog.root} has no bugs.`);
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    catalog.bugs.map((b) => ({
      label: b.id,
      description: b.title,
      detail: `${b.system}${b.kind === 'upstream' ? ' (real upstream code)' : ''} · tier ${b.tier} (${b.difficulty}) · ${b.categories.join(', ')} · ${b.kind === 'upstream' ? '' : 'like '}${b.modelledAfter.project} ${b.modelledAfter.id}`,
    })),
    { title: 'DDBench: Open Bug', placeHolder: 'Pick a bug to open as a workspace', matchOnDescription: true, matchOnDetail: true },
  );
  return picked?.label;
}

/**
 * Where new workspaces go. The first time, when the user never set `ddbench.workspacesDir`,
 * offers the default or a folder of their choice, and saves the answer.
 */
async function workspacesDirFor(settings: DDBenchSettings): Promise<string | undefined> {
  const key = SETTINGS.workspacesDir.slice('ddbench.'.length);
  const config = vscode.workspace.getConfiguration('ddbench');
  const inspected = config.inspect<string>(key);
  const configured =
    inspected?.globalValue !== undefined || inspected?.workspaceValue !== undefined || inspected?.workspaceFolderValue !== undefined;
  if (configured) return settings.workspacesDir;
  const useDefault = `Use ${settings.workspacesDir}`;
  const choose = 'Choose a Folder…';
  const answer = await vscode.window.showQuickPick([useDefault, choose], {
    title: 'DDBench: where should bug workspaces be created?',
    placeHolder: `Saved as the ${SETTINGS.workspacesDir} setting`,
  });
  if (!answer) return undefined;
  let dir = settings.workspacesDir;
  if (answer === choose) {
    const folders = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: 'Create Workspaces Here' });
    if (!folders?.[0]) return undefined;
    dir = folders[0].fsPath;
  }
  await config.update(key, dir, vscode.ConfigurationTarget.Global);
  return dir;
}

/**
 * `<workspacesDir>/<bug id>`, unless it holds something: an existing workspace of the
 * same bug may be reopened; otherwise the next free `<bug id>-N` is used.
 */
async function chooseTarget(workspacesDir: string, bug: BugEntry): Promise<{ dir: string; create: boolean } | undefined> {
  const first = path.join(workspacesDir, bug.id);
  if (isEmptyOrMissing(first)) return { dir: first, create: true };
  const existing = await readWorkspace(first).catch(() => undefined);
  if (existing?.bugId === bug.id) {
    const reopen = 'Open Existing';
    const fresh = 'Create a Fresh Copy';
    const answer = await vscode.window.showInformationMessage(
      `A workspace for ${bug.id} already exists at ${first}.`,
      { modal: true },
      reopen,
      fresh,
    );
    if (answer === reopen) return { dir: first, create: false };
    if (answer !== fresh) return undefined;
  }
  for (let n = 2; ; n++) {
    const dir = path.join(workspacesDir, `${bug.id}-${n}`);
    if (isEmptyOrMissing(dir)) return { dir, create: true };
  }
}

function isEmptyOrMissing(dir: string): boolean {
  return !fs.existsSync(dir) || fs.readdirSync(dir).length === 0;
}
