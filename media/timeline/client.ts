import { ToWebview, type HostRequest, type Meta, type Replies, type ToHost, type UiState } from '../../src/core/timeline/protocol';
import { receive, type WebviewHost } from '../shared/host';

/** The timeline's host: the extension, or the HTML export's page. */
export type TimelineHost = WebviewHost<ToHost, UiState>;

type RequestBody<T extends keyof Replies> = Omit<Extract<HostRequest, { type: T }>, 'reqId'>;

export interface Notifications {
  meta(meta: Meta, reason: 'init' | 'update'): void;
  /** A problem the host reported outside any request. */
  error(message: string): void;
}

/** The webview's end of the protocol: checks every message from the host and pairs answers with requests. */
export class HostClient {
  private nextId = 1;
  private readonly pending = new Map<number, { type: keyof Replies; resolve: (r: Replies[keyof Replies]) => void; reject: (e: Error) => void }>();

  constructor(
    private readonly host: TimelineHost,
    private readonly on: Notifications,
  ) {
    receive(host, ToWebview, (msg) => this.receive(msg), (problem) => this.on.error(`ignored a message from the host that is not in the protocol (${problem})`));
  }

  ready(protocol: number): void {
    this.host.post({ type: 'ready', protocol });
  }

  request<T extends keyof Replies>(body: RequestBody<T> & { type: T }): Promise<Replies[T]> {
    const reqId = this.nextId++;
    return new Promise<Replies[T]>((resolve, reject) => {
      this.pending.set(reqId, { type: body.type, resolve: resolve as (r: Replies[keyof Replies]) => void, reject });
      // `body` is one member of the union without its id; TypeScript cannot see the spread is that member again.
      this.host.post({ ...body, reqId } as unknown as HostRequest);
    });
  }

  openSource(ref: { run: number; index: number }): void {
    this.host.post({ type: 'openSource', ref });
  }

  compare(stop: boolean): void {
    this.host.post({ type: 'compare', stop });
  }

  private receive(msg: ToWebview): void {
    switch (msg.type) {
      case 'meta':
        return this.on.meta(msg.meta, msg.reason);
      case 'error': {
        const waiting = msg.reqId === undefined ? undefined : this.pending.get(msg.reqId);
        if (waiting === undefined || msg.reqId === undefined) return this.on.error(msg.message);
        this.pending.delete(msg.reqId);
        return waiting.reject(new Error(msg.message));
      }
      default: {
        const waiting = this.pending.get(msg.reqId);
        if (waiting === undefined) return;
        this.pending.delete(msg.reqId);
        waiting.resolve(msg);
      }
    }
  }
}
