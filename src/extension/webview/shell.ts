/**
 * The one shell of DDBench's webview panels (timeline, agent, comparison): the panel
 * and its options, the page (strict CSP with a nonce; the views style themselves with
 * VS Code's theme variables), the serializer that brings a panel back after a window
 * reload, messages from the page checked with the view's zod schema, and the `ready`
 * handshake: nothing is posted until the page says it listens, and a page that is
 * replaced has to say so again. A view keeps one panel at a time.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { z } from 'zod';
import { timelinePage } from '../../core/timeline/page';
import { errorMessage, reportError } from '../present';
import { trackPanel, webviewColumn } from './group';

export interface ViewSpec<In extends { type: string }> {
  viewType: string;
  /** What the output channel calls the view: "agent" gives `[agent] …` lines and "agent: start failed" reports. */
  name: string;
  /** The page's bundle in dist/media: `<bundle>.js`, and `<bundle>.css` unless the style is inline. */
  bundle: string;
  /** CSS to set in the page itself instead of the bundle's stylesheet. */
  inlineStyle?: string;
  /** What the page may send; anything else is logged and dropped. */
  schema: z.ZodType<In>;
  receive(msg: In): Promise<void> | void;
  /** A message's handling failed (already reported); the view may tell its page. */
  failed?(message: string): void;
  /** VS Code brought the panel back after a reload with the state its page last saved (unchecked): load a page or a notice. */
  restore(state: unknown): Promise<void> | void;
  closed?(): void;
}

interface Current {
  panel: vscode.WebviewPanel;
  /** The page said `ready` since it was last loaded. */
  ready: boolean;
}

export class WebviewShell<In extends { type: string }, Out> implements vscode.Disposable {
  private current: Current | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    private readonly spec: ViewSpec<In>,
  ) {
    context.subscriptions.push(
      vscode.window.registerWebviewPanelSerializer(spec.viewType, {
        deserializeWebviewPanel: async (panel, state: unknown) => {
          this.adopt(panel);
          await spec.restore(state);
        },
      }),
    );
  }

  get panel(): vscode.WebviewPanel | undefined {
    return this.current?.panel;
  }

  /**
   * Shows the panel under `title`: brings it to the front with its page as it is, or
   * creates it in the DDBench group with a fresh page. Returns whether it was there already.
   */
  open(title: string): boolean {
    const existing = this.current?.panel;
    if (existing !== undefined) {
      existing.title = title;
      existing.reveal(undefined, false);
      return true;
    }
    this.adopt(vscode.window.createWebviewPanel(this.spec.viewType, title, webviewColumn(), this.options()));
    this.load();
    return false;
  }

  /** A fresh page in the panel; it says `ready` again when it listens. */
  load(): void {
    const current = this.current;
    if (current === undefined) return;
    const { webview, title } = current.panel;
    const media = vscode.Uri.joinPath(this.context.extensionUri, 'dist', 'media');
    const asset = (ext: string): string => webview.asWebviewUri(vscode.Uri.joinPath(media, `${this.spec.bundle}.${ext}`)).toString();
    current.ready = false;
    webview.html = timelinePage({
      title,
      nonce: randomBytes(16).toString('base64'),
      cspSource: webview.cspSource,
      script: { src: asset('js') },
      style: this.spec.inlineStyle === undefined ? { href: asset('css') } : { inline: this.spec.inlineStyle },
    });
  }

  /** A page that only says something (no script), for a panel that has nothing to show. */
  notice(text: string): void {
    const current = this.current;
    if (current === undefined) return;
    current.ready = false;
    current.panel.webview.html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none';"></head><body><p>${escapeHtml(text)}</p></body></html>`;
  }

  /** Posts to the page once it has said `ready`; before that the message is dropped (the page asks for everything when it is ready). */
  post(msg: Out): void {
    if (this.current?.ready === true) void this.current.panel.webview.postMessage(msg);
  }

  dispose(): void {
    this.current?.panel.dispose();
  }

  private adopt(panel: vscode.WebviewPanel): void {
    const previous = this.current;
    const current: Current = { panel, ready: false };
    this.current = current;
    previous?.panel.dispose();
    panel.webview.options = this.options();
    panel.iconPath = vscode.Uri.joinPath(this.context.extensionUri, 'media', 'icons', 'ddbench.svg');
    const subscriptions = [trackPanel(panel), panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(current, raw))];
    panel.onDidDispose(() => {
      subscriptions.forEach((s) => s.dispose());
      if (this.current !== current) return;
      this.current = undefined;
      this.spec.closed?.();
    });
  }

  private receive(current: Current, raw: unknown): void {
    if (this.current !== current) return;
    const parsed = this.spec.schema.safeParse(raw);
    if (!parsed.success) {
      this.output.appendLine(`[${this.spec.name}] ignored a malformed message from the page: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      return;
    }
    const msg = parsed.data;
    if (msg.type === 'ready') current.ready = true;
    Promise.resolve()
      .then(() => this.spec.receive(msg))
      .catch((err: unknown) => {
        reportError(this.output, `${this.spec.name}: ${msg.type}`, err);
        this.spec.failed?.(errorMessage(err));
      });
  }

  private options(): vscode.WebviewOptions & vscode.WebviewPanelOptions {
    return { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.context.extensionUri, 'dist', 'media')] };
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
