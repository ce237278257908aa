/**
 * Where the app runs: inside a VS Code webview (acquireVsCodeApi), or in a plain
 * page where the host is a module of the page itself (the HTML export, tests).
 * The app talks only to this interface.
 */
import type { ToHost, UiState } from '../../src/core/timeline/protocol';

export interface TimelineHost {
  post(msg: ToHost): void;
  /** Registers the one handler for messages from the host (checked by the caller). */
  listen(handler: (msg: unknown) => void): void;
  /** The persisted UI blob (unchecked: it may be from an older build). */
  loadState(): unknown;
  saveState(state: UiState): void;
}

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

export function vscodeHost(): TimelineHost {
  const api = acquireVsCodeApi();
  return {
    post: (msg) => api.postMessage(msg),
    listen: (handler) => window.addEventListener('message', (e: MessageEvent<unknown>) => handler(e.data)),
    loadState: () => api.getState(),
    saveState: (state) => api.setState(state),
  };
}
