import type { EventInput } from '../events/event';
import { FaultPath, faultEvent, linkOf, type FaultAction } from '../cluster/fault-path';
import { FaultTable } from '../cluster/fault-table';
import { applyRules, type FaultDecision } from '../cluster/link-faults';
import type { LinkFault } from '../cluster/types';
import type { Json } from '../../runtime/types';
import type { VectorClock } from '../../runtime/vclock';
import type { DecisionSource } from './decisions';
import type { Scheduler } from './scheduler';

/** A message on its way: the body travels as JSON text, so no endpoint shares objects with another. */
export interface Packet {
  msgId: string;
  from: string;
  to: string;
  type: string;
  wire: string;
  /** The body as the send and receive events show it (events are read-only, so one copy serves both). */
  shown: Json;
  vc?: VectorClock;
}

export interface NetworkOptions {
  /** Latency of each delivered copy in µs, drawn uniformly; messages on one link stay in order, as over TCP. */
  latencyUs: readonly [number, number];
  /** How long a reordered message waits for the next one on its link before it goes anyway (as the router). */
  reorderHoldMs: number;
}

export interface NetworkDeps {
  scheduler: Scheduler;
  decisions: DecisionSource;
  emit(event: EventInput): void;
  /** Hands a copy to its destination when it arrives. */
  arrive(packet: Packet): void;
}

/**
 * The simulated router: the live router's fault path (partition, then link-fault
 * rules), with every random choice drawn from the run's decision source and every
 * wait on the scheduler. Its fault events are the router's, field for field.
 */
export class SimNetwork {
  /** The partition and link-fault rules the harness set. */
  readonly faults = new FaultTable();
  private readonly path: FaultPath<Packet>;
  /** When the last copy on each link arrives; a later copy never overtakes it. */
  private readonly linkClear = new Map<string, number>();

  constructor(
    private readonly deps: NetworkDeps,
    private readonly opts: NetworkOptions,
  ) {
    const { scheduler } = deps;
    this.path = new FaultPath({
      faults: this.faults,
      decide: (packet, rules) => this.decideFaults(packet, rules),
      after: (ms, fn) => scheduler.after(ms * 1000, fn),
      deliver: (packet, copies) => this.transmit(packet, copies),
      fault: (action, packet, fields) => this.fault(action, packet, fields),
      reorderHoldMs: opts.reorderHoldMs,
    });
  }

  send(packet: Packet): void {
    this.path.send(packet);
  }

  /** Records that a copy found nobody at its destination (not connected, or crashed). */
  unreachable(packet: Packet): void {
    this.fault('drop', packet, { reason: 'unreachable' });
  }

  /** The live router's rules, drawing from the decision source so a schedule can be shrunk. */
  private decideFaults(packet: Packet, rules: readonly LinkFault[]): FaultDecision {
    // Most messages meet no rule; they need no description to draw with.
    if (rules.length === 0) return { duplicate: false, reorder: false, delayMs: 0 };
    const { decisions } = this.deps;
    const subject = () => describe(packet);
    return applyRules(rules, packet, () => ({
      chance: (outcome, p) => p > 0 && decisions.chance(outcome, p, subject),
      delayMs: (min, max) => decisions.uniform('fault-delay', min, max, subject),
    }));
  }

  private transmit(packet: Packet, copies: number): void {
    const { scheduler, decisions } = this.deps;
    const link = linkOf(packet);
    const [min, max] = this.opts.latencyUs;
    for (let copy = 0; copy < copies; copy++) {
      const latency = decisions.uniform('latency', min, max, () => describe(packet));
      const arrival = Math.max(scheduler.now() + latency, this.linkClear.get(link) ?? 0);
      this.linkClear.set(link, arrival);
      scheduler.at(arrival, () => this.deps.arrive(packet));
    }
  }

  private fault(action: FaultAction, packet: Packet, fields: Record<string, string | number>): void {
    this.deps.emit(faultEvent(this.deps.scheduler.now(), action, packet, fields));
  }
}

export function describe(packet: Packet): string {
  return `${packet.from}→${packet.to} ${packet.type} ${packet.msgId}`;
}
