/**
 * Where a webview app runs: a VS Code webview (acquireVsCodeApi), or a plain page that
 * supplies its own host (the timeline's HTML export, tests). Apps talk only to this
 * interface, typed by what they send and what they persist.
 */
import type { z } from 'zod';

export interface WebviewHost<Out, State> {
  post(msg: Out): void;
  /** The one handler for messages from the host, unchecked (see `receive`). */
  listen(handler: (msg: unknown) => void): void;
  /** The persisted UI blob, unchecked (it may come from an older build). */
  loadState(): unknown;
  saveState(state: State): void;
}

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

export function vscodeHost<Out, State>(): WebviewHost<Out, State> {
  const api = acquireVsCodeApi();
  return {
    post: (msg) => api.postMessage(msg),
    listen: (handler) => window.addEventListener('message', (e: MessageEvent<unknown>) => handler(e.data)),
    loadState: () => api.getState(),
    saveState: (state) => api.setState(state),
  };
}

/** Listens to the host with every message checked against the view's schema; the rest goes to `invalid` with the first problem. */
export function receive<T, Out, State>(host: WebviewHost<Out, State>, schema: z.ZodType<T>, handler: (msg: T) => void, invalid: (problem: string) => void): void {
  host.listen((raw) => {
    const parsed = schema.safeParse(raw);
    if (parsed.success) handler(parsed.data);
    else invalid(parsed.error.issues[0]?.message ?? 'unknown shape');
  });
}
