import net from 'node:net';
import type { EventInput } from '../events/event';
import { readLines } from '../../runtime/ndjson';
import type { Json } from '../../runtime/types';
import { VectorClockTracker } from '../../runtime/vclock';
import { decodeFrame, encodeFrame, FromRouterFrame, type MsgFrame } from '../../runtime/wire';
import type { ClusterClient } from './types';

export interface RouterClientOptions {
  name: string;
  routerHost: string;
  routerPort: number;
  /** Makes this client's message ids unique even if its name was used before in the run. */
  msgIdPrefix: string;
  now(): number;
  emit(event: EventInput): void;
  onClose(): void;
}

interface PendingRequest {
  resolve(body: Json): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * A harness-side endpoint of the router. It keeps a vector clock and records its
 * sends and receives as events, so clients get their own lane in the timeline and
 * take part in happens-before.
 */
export class RouterClient implements ClusterClient {
  private readonly clock: VectorClockTracker;
  private readonly pending = new Map<string, PendingRequest>();
  private sent = 0;
  private closed = false;

  private constructor(
    private readonly opts: RouterClientOptions,
    private readonly socket: net.Socket,
  ) {
    this.clock = new VectorClockTracker(opts.name);
  }

  get name(): string {
    return this.opts.name;
  }

  /** Connects and says hello; resolves once the router welcomed the client. */
  static connect(opts: RouterClientOptions): Promise<RouterClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(opts.routerPort, opts.routerHost);
      const client = new RouterClient(opts, socket);
      let welcomed = false;
      socket.setNoDelay(true);
      socket.once('connect', () => socket.write(encodeFrame({ t: 'hello', node: opts.name, role: 'client' })));
      readLines(socket, (line) => {
        const decoded = decodeFrame(FromRouterFrame, line);
        if (!decoded.ok) return client.fail(new Error(`client ${opts.name}: bad frame from router: ${decoded.error}`));
        const frame = decoded.frame;
        if (frame.t === 'welcome') {
          welcomed = true;
          resolve(client);
        } else if (frame.t === 'msg') {
          client.receive(frame);
        }
      });
      socket.on('error', (err) => {
        if (!welcomed) reject(new Error(`client ${opts.name} could not connect to the router: ${err.message}`));
      });
      socket.on('close', () => {
        if (!welcomed) reject(new Error(`client ${opts.name}: router closed the connection before welcoming it`));
        client.fail(new Error(`client ${opts.name}: connection to the router closed`));
      });
    });
  }

  request(node: string, type: string, body: Record<string, Json>, timeoutMs: number): Promise<Json> {
    if (this.closed) return Promise.reject(new Error(`client ${this.name} is closed`));
    const msgId = `${this.opts.msgIdPrefix}:${++this.sent}`;
    // The message id is unique in the run, so it serves as the request id too.
    const reqId = msgId;
    const payload: Json = { ...body, reqId };
    return new Promise<Json>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(reqId);
        reject(new Error(`client ${this.name}: no reply from ${node} to ${type} (reqId ${reqId}) within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(reqId, { resolve, reject, timer });
      const vc = this.clock.tick();
      this.opts.emit({ ts: this.opts.now(), node: this.name, kind: 'send', msg: type, msgId, peer: node, vc, fields: { body: payload } });
      this.socket.write(encodeFrame({ t: 'msg', msgId, from: this.name, to: node, type, body: payload, vc }));
    });
  }

  close(): void {
    this.fail(new Error(`client ${this.name} was closed`));
  }

  private receive(frame: MsgFrame): void {
    const vc = this.clock.receive(frame.vc ?? {});
    this.opts.emit({ ts: this.opts.now(), node: this.name, kind: 'recv', msg: frame.type, msgId: frame.msgId, peer: frame.from, vc, fields: { body: frame.body } });
    const body = frame.body;
    const reqId = typeof body === 'object' && body !== null && !Array.isArray(body) ? body.reqId : undefined;
    if (typeof reqId !== 'string') return;
    const pending = this.pending.get(reqId);
    if (pending === undefined) return; // a late or duplicated reply
    clearTimeout(pending.timer);
    this.pending.delete(reqId);
    pending.resolve(body);
  }

  /** Ends the client: rejects what is pending with `err`, closes the socket, tells the owner once. */
  private fail(err: Error): void {
    if (this.closed) return;
    this.closed = true;
    for (const pending of this.pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(err);
    }
    this.pending.clear();
    this.socket.destroy();
    this.opts.onClose();
  }
}
