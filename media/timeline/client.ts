import { ToWebview, type HostRequest, type Meta, type Replies } from '../../src/core/timeline/protocol';
import type { TimelineHost } from './host';

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
    host.listen((raw) => this.receive(raw));
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

  private receive(raw: unknown): void {
    const parsed = ToWebview.safeParse(raw);
    if (!parsed.success) {
      this.on.error(`ignored a message from the host that is not in the protocol (${parsed.error.issues[0]?.message ?? 'unknown shape'})`);
      return;
    }
    const msg = parsed.data;
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
