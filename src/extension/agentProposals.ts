/**
 * Proposed patches in VS Code's diff editor: the left side is the workspace file as
 * it was when the patch arrived (a read-only virtual document), the right side the
 * agent's version in an in-memory file system, so a person can edit it before
 * accepting. Accepting applies the right side to the workspace with one WorkspaceEdit
 * (so undo works); nothing touches the workspace before that.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Attempt } from '../core/agent/events';

export const ORIGINAL_SCHEME = 'ddbench-original';
export const PROPOSAL_SCHEME = 'ddbench-proposal';

interface ProposalFile {
  path: string;
  /** The workspace file when the patch arrived; null when the patch creates it. */
  original: string | null;
  /** The agent's version; null when the patch deletes the file. */
  proposed: string | null;
}

interface Proposal {
  key: string;
  workspaceDir: string;
  files: ProposalFile[];
}

export class Proposals implements vscode.Disposable {
  private readonly proposals = new Map<string, Proposal>();
  private readonly memory = new MemoryFileSystem();
  private readonly registrations: vscode.Disposable[];

  constructor() {
    const originals: vscode.TextDocumentContentProvider = { provideTextDocumentContent: (uri) => this.originalOf(uri) };
    this.registrations = [
      vscode.workspace.registerTextDocumentContentProvider(ORIGINAL_SCHEME, originals),
      vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, this.memory, { isCaseSensitive: true }),
    ];
  }

  /** Registers an attempt's patch under `key` (unique per run and attempt). */
  add(key: string, workspaceDir: string, attempt: Attempt): void {
    const files = attempt.files.map((f) => ({ path: f.path, original: readIfExists(path.join(workspaceDir, f.path)), proposed: f.after }));
    this.proposals.set(key, { key, workspaceDir, files });
    for (const f of files) this.memory.put(this.uri(PROPOSAL_SCHEME, key, f.path), f.proposed ?? '');
  }

  /** Opens each file's diff beside the panel, leaving the focus where it is. */
  async show(key: string, title: string): Promise<void> {
    const p = this.get(key);
    for (const f of p.files) {
      const what = f.original === null ? 'new file' : f.proposed === null ? 'deleted' : 'editable';
      await vscode.commands.executeCommand('vscode.diff', this.uri(ORIGINAL_SCHEME, key, f.path), this.uri(PROPOSAL_SCHEME, key, f.path), `${f.path}: workspace ↔ ${title} (${what})`, {
        preview: false,
        preserveFocus: true,
        viewColumn: vscode.ViewColumn.Beside,
      });
    }
  }

  /**
   * Applies the right-hand sides (with the person's edits) to the workspace and saves
   * them. Undefined when the person declined to overwrite files changed meanwhile.
   */
  async accept(key: string): Promise<{ edited: boolean } | undefined> {
    const p = this.get(key);
    const changed = p.files.filter((f) => readIfExists(path.join(p.workspaceDir, f.path)) !== f.original).map((f) => f.path);
    if (changed.length > 0) {
      const go = 'Accept Anyway';
      const choice = await vscode.window.showWarningMessage(`${changed.join(', ')} changed in the workspace since this patch arrived. Accepting replaces those changes.`, { modal: true }, go);
      if (choice !== go) return undefined;
    }
    const edit = new vscode.WorkspaceEdit();
    const saved: vscode.Uri[] = [];
    let edited = false;
    for (const f of p.files) {
      const target = vscode.Uri.file(path.join(p.workspaceDir, f.path));
      const text = await this.currentText(this.uri(PROPOSAL_SCHEME, key, f.path));
      edited ||= text !== (f.proposed ?? '');
      if (f.proposed === null && text === '') {
        edit.deleteFile(target, { ignoreIfNotExists: true });
      } else if (fs.existsSync(target.fsPath)) {
        const doc = await vscode.workspace.openTextDocument(target);
        edit.replace(target, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
        saved.push(target);
      } else {
        edit.createFile(target, { ignoreIfExists: true, contents: Buffer.from(text, 'utf8') });
      }
    }
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error('VS Code did not apply the patch to the workspace');
    // Saved, so the reproducer and verification (which read the disk) see the change.
    for (const uri of saved) await (await vscode.workspace.openTextDocument(uri)).save();
    await this.close(key);
    return { edited };
  }

  async reject(key: string): Promise<void> {
    this.get(key);
    await this.close(key);
  }

  /** The proposal a diff editor's document belongs to (for the editor title's Accept and Reject). */
  keyOf(uri: vscode.Uri): string | undefined {
    if (uri.scheme !== PROPOSAL_SCHEME && uri.scheme !== ORIGINAL_SCHEME) return undefined;
    const key = uri.path.split('/').slice(1, 3).join('/');
    return this.proposals.has(key) ? key : undefined;
  }

  dispose(): void {
    this.registrations.forEach((r) => r.dispose());
  }

  private get(key: string): Proposal {
    const p = this.proposals.get(key);
    if (!p) throw new Error(`no proposed patch ${key}`);
    return p;
  }

  /** `scheme:/<run>/<attempt>/<file path>`: the file's name keeps its language. */
  private uri(scheme: string, key: string, file: string): vscode.Uri {
    return vscode.Uri.from({ scheme, path: `/${key}/${file}` });
  }

  private originalOf(uri: vscode.Uri): string {
    const key = uri.path.split('/').slice(1, 3).join('/');
    const file = uri.path.split('/').slice(3).join('/');
    return this.proposals.get(key)?.files.find((f) => f.path === file)?.original ?? '';
  }

  /** The right-hand side as the person left it, unsaved edits included. */
  private async currentText(uri: vscode.Uri): Promise<string> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    return open ? open.getText() : Buffer.from(await this.memory.readFile(uri)).toString('utf8');
  }

  /** Closes this proposal's diff tabs; edited right-hand sides are saved first so no prompt appears. */
  private async close(key: string): Promise<void> {
    const mine = (u: vscode.Uri) => u.scheme === PROPOSAL_SCHEME && u.path.startsWith(`/${key}/`);
    for (const d of vscode.workspace.textDocuments) if (mine(d.uri) && d.isDirty) await d.save();
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff && mine(t.input.modified));
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
  }
}

/** A flat in-memory file system for the editable right-hand sides. */
class MemoryFileSystem implements vscode.FileSystemProvider {
  private readonly files = new Map<string, { data: Uint8Array; mtime: number }>();
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;

  put(uri: vscode.Uri, text: string): void {
    this.files.set(uri.path, { data: Buffer.from(text, 'utf8'), mtime: Date.now() });
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const f = this.files.get(uri.path);
    if (f) return { type: vscode.FileType.File, ctime: f.mtime, mtime: f.mtime, size: f.data.length };
    if ([...this.files.keys()].some((k) => k.startsWith(`${uri.path}/`))) return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
    throw vscode.FileSystemError.FileNotFound(uri);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(): void {}

  readFile(uri: vscode.Uri): Uint8Array {
    const f = this.files.get(uri.path);
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return f.data;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    if (!this.files.has(uri.path)) throw vscode.FileSystemError.NoPermissions('only the proposed files can be edited');
    this.files.set(uri.path, { data: content, mtime: Date.now() });
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
}

function readIfExists(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
