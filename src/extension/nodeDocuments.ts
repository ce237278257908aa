import * as vscode from 'vscode';
import { codeColumn } from './webview/group';
import { formatEvent } from '../core/repro/evidence';
import type { ClusterSession } from './clusterSession';

export const NODE_SCHEME = 'ddbench-node';
/** Log lines a node's page shows (its newest). */
const LOG_LINES = 200;
/** How often an open node page is re-read while the cluster runs. */
const REFRESH_MS = 2000;

/**
 * A node's page: its live state (the debug-state endpoint) and its newest log lines,
 * as a read-only document that follows the running cluster. A click on a node in the
 * Cluster view opens it.
 */
export class NodeDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly timer = setInterval(() => this.refreshOpen(), REFRESH_MS);
  private readonly registration: vscode.Disposable;

  constructor(private readonly session: ClusterSession) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(NODE_SCHEME, this);
  }

  static uri(node: string): vscode.Uri {
    return vscode.Uri.from({ scheme: NODE_SCHEME, path: `/${node}.md` });
  }

  async open(node: string): Promise<void> {
    const doc = await vscode.workspace.openTextDocument(NodeDocuments.uri(node));
    await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true, viewColumn: codeColumn() });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const node = uri.path.replace(/^\//, '').replace(/\.md$/, '');
    const running = this.session.running;
    if (!running) return `# ${node}\n\nNo cluster is running. Launch the cluster to see this node's state and log.\n`;
    const info = running.cluster.nodes().find((n) => n.id === node);
    let state: string;
    try {
      state = JSON.stringify(await running.cluster.state(node), null, 2);
    } catch (err) {
      state = `// not available: ${err instanceof Error ? err.message : String(err)}`;
    }
    const events = running.cluster.events().filter((e) => e.node === node && (e.kind === 'log' || e.kind === 'proc' || e.kind === 'fault'));
    const log = events.slice(-LOG_LINES).map(formatEvent);
    return [
      `# ${node} · ${info?.status ?? 'unknown'}${info?.pid !== undefined ? ` · pid ${info.pid}` : ''}`,
      '',
      `State at ${new Date().toLocaleTimeString()} (refreshed every ${REFRESH_MS / 1000} s while the cluster runs):`,
      '',
      '```json',
      state,
      '```',
      '',
      `Log (${log.length === events.length ? `${log.length} lines` : `newest ${log.length} of ${events.length} lines`}):`,
      '',
      '```text',
      ...log,
      '```',
      '',
    ].join('\n');
  }

  dispose(): void {
    clearInterval(this.timer);
    this.registration.dispose();
    this.changed.dispose();
  }

  private refreshOpen(): void {
    if (!this.session.running) return;
    for (const doc of vscode.workspace.textDocuments) if (doc.uri.scheme === NODE_SCHEME) this.changed.fire(doc.uri);
  }
}
