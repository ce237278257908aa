import fs from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { EventInput } from '../events/event';
import { readLines } from '../../runtime/ndjson';
import { decodeFrame, encodeFrame, ToRouterFrame, type FromRouterFrame, type HelloFrame, type MsgFrame } from '../../runtime/wire';
import { redact } from '../secrets';
import { FaultPath, faultEvent, type FaultAction } from './fault-path';
import { FaultTable } from './fault-table';
import { decideFaults } from './link-faults';

export interface RouterOptions {
  /** Seeds every fault decision. */
  seed: number;
  /** Microseconds since the run started, for records and events. */
  now(): number;
  /** Receives the router's fault events and warnings. */
  emit(event: EventInput): void;
  /** router.jsonl: one line per message handled (received, delivered, dropped, held, ...). */
  recordFile?: string;
  /** How long a reordered message waits for the next message on its link before it goes anyway. */
  reorderHoldMs?: number;
}

export type EndpointInfo = Omit<HelloFrame, 't'>;

/** What router.jsonl records for each step of a message's way through the router. */
type RecordAction = 'recv' | 'deliver' | FaultAction;

const DEFAULT_REORDER_HOLD_MS = 500;

/**
 * The message router: every endpoint (node or client) connects over TCP or a Unix
 * socket and says hello; envelopes are forwarded to their destination's connection, after the
 * partition and the link-fault rules in `faults` had their say (the fault path the
 * simulated network takes too). Each injected action is emitted as a `fault` event
 * and every step is recorded to router.jsonl as ground truth.
 */
export class Router {
  private readonly server = net.createServer((socket) => this.accept(socket));
  /** Unix sockets for sandboxed nodes, which have no network. */
  private readonly socketServers: net.Server[] = [];
  private readonly sockets = new Set<net.Socket>();
  /** Connected endpoints by name. */
  private readonly endpoints = new Map<string, net.Socket>();
  /** Delays and reorder holds under way; close() cancels them. */
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly skews = new Map<string, number>();
  private readonly helloListeners = new Set<(info: EndpointInfo) => void>();
  private record: fs.WriteStream | undefined;
  private closed = false;
  /** The partition and link-fault rules the harness set. */
  readonly faults = new FaultTable();
  private readonly path: FaultPath<MsgFrame>;

  constructor(private readonly opts: RouterOptions) {
    this.path = new FaultPath({
      faults: this.faults,
      decide: (msg, rules) => decideFaults(rules, msg, opts.seed),
      after: (ms, fn) => this.after(ms, fn),
      deliver: (msg, copies) => this.deliver(msg, copies),
      fault: (action, msg, fields) => this.fault(action, msg, fields),
      reorderHoldMs: opts.reorderHoldMs ?? DEFAULT_REORDER_HOLD_MS,
    });
    if (opts.recordFile === undefined) return;
    const record = fs.createWriteStream(opts.recordFile, { flags: 'a' });
    // A record that cannot be written (folder removed, disk full) must not take the harness down.
    record.on('error', (err) => {
      this.record = undefined;
      this.warn(`cannot write ${opts.recordFile}: ${err.message}; message records stop here`);
    });
    this.record = record;
  }

  /** Listens on a free port of `host` (loopback unless a backend's nodes live elsewhere) and resolves with it. */
  listen(host = '127.0.0.1'): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, host, () => {
        this.server.off('error', reject);
        resolve(this.port);
      });
    });
  }

  /** Also accepts endpoints on a Unix socket at `socketPath` (a named pipe on Windows). */
  listenSocket(socketPath: string): Promise<void> {
    const server = net.createServer((socket) => this.accept(socket));
    this.socketServers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Calls `listener` for every accepted hello. Returns the unsubscribe function. */
  onHello(listener: (info: EndpointInfo) => void): () => void {
    this.helloListeners.add(listener);
    return () => this.helloListeners.delete(listener);
  }

  /** Sets an endpoint's clock offset; remembered, so a reconnecting (restarted) node gets it again. */
  setSkew(endpoint: string, offsetMs: number): void {
    this.skews.set(endpoint, offsetMs);
    this.endpoints.get(endpoint)?.write(encodeFrame({ t: 'skew', offsetMs }));
  }

  /** Stops listening, drops held and delayed messages, and closes every connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.path.dropHeld();
    for (const socket of this.sockets) socket.destroy();
    await Promise.all([this.server, ...this.socketServers].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    const record = this.record;
    this.record = undefined;
    if (record !== undefined) await new Promise<void>((resolve) => record.end(resolve));
  }

  private accept(socket: net.Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.setNoDelay(true);
    let name: string | undefined;
    readLines(socket, (line) => {
      const decoded = decodeFrame(ToRouterFrame, line);
      if (!decoded.ok) {
        this.warn(`bad frame from ${name ?? 'an unnamed endpoint'}: ${decoded.error}`);
        return;
      }
      const frame = decoded.frame;
      if (frame.t === 'hello') {
        if (name !== undefined) this.warn(`${name} said hello twice; ignored`);
        else name = this.register(frame, socket);
      } else if (name === undefined) {
        this.warn(`message ${frame.msgId} before hello; dropped`);
      } else {
        // The connection, not the frame, says who is sending.
        this.route({ ...frame, from: name });
      }
    });
    socket.on('error', () => {
      // 'close' follows every error and does the bookkeeping.
    });
    socket.on('close', () => {
      this.sockets.delete(socket);
      if (name !== undefined && this.endpoints.get(name) === socket) this.endpoints.delete(name);
    });
  }

  private register(hello: HelloFrame, socket: net.Socket): string {
    const { t: _t, ...info } = hello;
    const previous = this.endpoints.get(info.node);
    if (previous !== undefined) {
      // A restarted node can say hello before the router saw its old connection close.
      this.warn(`${info.node} connected again; its previous connection is closed`);
      previous.destroy();
    }
    this.endpoints.set(info.node, socket);
    socket.write(encodeFrame({ t: 'welcome' }));
    const skew = this.skews.get(info.node);
    if (skew !== undefined) socket.write(encodeFrame({ t: 'skew', offsetMs: skew }));
    for (const listener of this.helloListeners) listener(info);
    return info.node;
  }

  private route(msg: MsgFrame): void {
    this.write('recv', msg, { body: msg.body, ...(msg.vc && { vc: msg.vc }) });
    this.path.send(msg);
  }

  private after(ms: number, fn: () => void): { cancel(): void } {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
    return {
      cancel: () => {
        clearTimeout(timer);
        this.timers.delete(timer);
      },
    };
  }

  private deliver(msg: MsgFrame, copies: number): void {
    const target = this.endpoints.get(msg.to);
    if (target === undefined) {
      this.fault('drop', msg, { reason: 'unreachable' });
      return;
    }
    const line = encodeFrame(msg satisfies FromRouterFrame);
    for (let copy = 0; copy < copies; copy++) {
      target.write(line);
      this.write('deliver', msg, copies > 1 ? { copy: copy + 1 } : {});
    }
  }

  private fault(action: FaultAction, msg: MsgFrame, fields: Record<string, string | number>): void {
    this.write(action, msg, fields);
    this.opts.emit(faultEvent(this.opts.now(), action, msg, fields));
  }

  private warn(msg: string): void {
    this.opts.emit({ ts: this.opts.now(), node: 'router', kind: 'log', level: 'warn', msg });
  }

  private write(action: RecordAction, msg: MsgFrame, extra: Record<string, unknown>): void {
    const { msgId, from, to, type } = msg;
    this.record?.write(redact(JSON.stringify({ ts: this.opts.now(), action, msgId, from, to, type, ...extra })) + '\n');
  }
}
