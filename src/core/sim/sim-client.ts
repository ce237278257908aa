import type { EventInput } from '../events/event';
import type { ClusterClient } from '../cluster/types';
import type { Json } from '../../runtime/types';
import { VectorClockTracker } from '../../runtime/vclock';
import type { MsgFrame } from '../../runtime/wire';
import type { Packet } from './network';
import type { Cancellable, Scheduler } from './scheduler';

export interface SimClientOptions {
  name: string;
  /** Makes this client's message ids unique even if its name was used before in the run. */
  msgIdPrefix: string;
  scheduler: Scheduler;
  send(packet: Packet): void;
  emit(event: EventInput): void;
  onClose(): void;
}

interface PendingRequest {
  resolve(body: Json): void;
  reject(err: Error): void;
  timer: Cancellable;
}

/**
 * A harness endpoint in the simulated network: the RouterClient's behaviour (reqId
 * matching, vector clock, send/recv events) with virtual-time timeouts. Settling a
 * request wakes the scheduler so the scenario continues at that virtual instant.
 */
export class SimClient implements ClusterClient {
  private readonly clock: VectorClockTracker;
  private readonly pending = new Map<string, PendingRequest>();
  private sent = 0;
  private closed = false;

  constructor(private readonly opts: SimClientOptions) {
    this.clock = new VectorClockTracker(opts.name);
  }

  get name(): string {
    return this.opts.name;
  }

  request(node: string, type: string, body: Record<string, Json>, timeoutMs: number): Promise<Json> {
    if (this.closed) return Promise.reject(new Error(`client ${this.name} is closed`));
    const msgId = `${this.opts.msgIdPrefix}:${++this.sent}`;
    // The message id is unique in the run, so it serves as the request id too.
    const reqId = msgId;
    const wire = JSON.stringify({ ...body, reqId });
    const { scheduler } = this.opts;
    return new Promise<Json>((resolve, reject) => {
      const timer = scheduler.after(timeoutMs * 1000, () => {
        this.pending.delete(reqId);
        reject(new Error(`client ${this.name}: no reply from ${node} to ${type} (reqId ${reqId}) within ${timeoutMs} ms`));
        scheduler.wake();
      });
      this.pending.set(reqId, { resolve, reject, timer });
      const vc = this.clock.tick();
      const shown = JSON.parse(wire) as Json;
      this.opts.emit({ ts: scheduler.now(), node: this.name, kind: 'send', msg: type, msgId, peer: node, vc, fields: { body: shown } });
      this.opts.send({ msgId, from: this.name, to: node, type, wire, shown, vc });
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const err = new Error(`client ${this.name} was closed`);
    for (const pending of this.pending.values()) {
      pending.timer.cancel();
      pending.reject(err);
    }
    this.pending.clear();
    this.opts.onClose();
  }

  receive(frame: MsgFrame, eventBody: Json): void {
    const vc = this.clock.receive(frame.vc ?? {});
    this.opts.emit({ ts: this.opts.scheduler.now(), node: this.name, kind: 'recv', msg: frame.type, msgId: frame.msgId, peer: frame.from, vc, fields: { body: eventBody } });
    const body = frame.body;
    const reqId = typeof body === 'object' && body !== null && !Array.isArray(body) ? body.reqId : undefined;
    if (typeof reqId !== 'string') return;
    const pending = this.pending.get(reqId);
    if (pending === undefined) return; // a late or duplicated reply
    pending.timer.cancel();
    this.pending.delete(reqId);
    pending.resolve(body);
    this.opts.scheduler.wake();
  }
}
