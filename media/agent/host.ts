/**
 * Where the panel app runs: a VS Code webview (acquireVsCodeApi), or a plain page
 * that supplies its own host (tests). The app talks only to this interface.
 */
import type { ToHost } from '../../src/core/agent/panel-protocol';

export interface AgentHost {
  post(msg: ToHost): void;
  /** The one handler for messages from the host (the app checks them). */
  listen(handler: (msg: unknown) => void): void;
  /** The persisted UI blob, unchecked (it may come from an older build). */
  loadState(): unknown;
  saveState(state: unknown): void;
}

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

export function vscodeHost(): AgentHost {
  const api = acquireVsCodeApi();
  return {
    post: (msg) => api.postMessage(msg),
    listen: (handler) => window.addEventListener('message', (e: MessageEvent<unknown>) => handler(e.data)),
    loadState: () => api.getState(),
    saveState: (state) => api.setState(state),
  };
}
