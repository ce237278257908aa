import type { EventInput } from '../events/event';
import { checkLinkFault, isCut, partitionIndex, ruleMatches } from '../cluster/link-faults';
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

interface FaultDecision {
  dropRule?: number;
  duplicate: boolean;
  reorder: boolean;
  delayMs: number;
}

interface Held {
  packet: Packet;
  copies: number;
  timer: { cancel(): void };
}

type FaultAction = 'drop' | 'duplicate' | 'delay' | 'reorder';

/**
 * The simulated router: the same partition and link-fault semantics as the live one
 * (router.ts), with every random choice drawn from the run's decision source and
 * every wait on the scheduler. Its fault events are the router's, field for field.
 */
export class SimNetwork {
  private groups = new Map<string, number>();
  private rules: LinkFault[] = [];
  private readonly held = new Map<string, Held>();
  /** When the last copy on each link arrives; a later copy never overtakes it. */
  private readonly linkClear = new Map<string, number>();

  constructor(
    private readonly deps: NetworkDeps,
    private readonly opts: NetworkOptions,
  ) {}

  partition(groups: string[][]): void {
    this.groups = partitionIndex(groups);
  }

  heal(): void {
    this.groups = new Map();
  }

  addLinkFault(fault: LinkFault): void {
    checkLinkFault(fault);
    this.rules.push({ ...fault });
  }

  clearLinkFaults(): void {
    this.rules = [];
  }

  send(packet: Packet): void {
    if (isCut(this.groups, packet.from, packet.to)) {
      this.fault('drop', packet, { reason: 'partition' });
      return;
    }
    const decision = this.decideFaults(packet);
    if (decision.dropRule !== undefined) {
      this.fault('drop', packet, { reason: 'rule', rule: decision.dropRule });
      return;
    }
    const copies = decision.duplicate ? 2 : 1;
    if (decision.duplicate) this.fault('duplicate', packet, { reason: 'rule' });
    if (decision.delayMs > 0) {
      this.fault('delay', packet, { reason: 'rule', delayMs: decision.delayMs });
      this.deps.scheduler.after(decision.delayMs * 1000, () => this.forward(packet, copies, decision.reorder));
    } else {
      this.forward(packet, copies, decision.reorder);
    }
  }

  /** Records that a copy found nobody at its destination (not connected, or crashed). */
  unreachable(packet: Packet): void {
    this.fault('drop', packet, { reason: 'unreachable' });
  }

  /** The live router's decideFaults, drawing from the decision source so a schedule can be shrunk. */
  private decideFaults(packet: Packet): FaultDecision {
    const decision: FaultDecision = { duplicate: false, reorder: false, delayMs: 0 };
    // Most messages meet no rule; they need no description to draw with.
    if (this.rules.length === 0) return decision;
    const { decisions } = this.deps;
    const subject = () => describe(packet);
    this.rules.forEach((rule, index) => {
      if (decision.dropRule !== undefined || !ruleMatches(rule, packet)) return;
      if (rule.drop !== undefined && rule.drop > 0 && decisions.chance('drop', rule.drop, subject)) {
        decision.dropRule = index;
        return;
      }
      if (rule.duplicate !== undefined && rule.duplicate > 0 && decisions.chance('duplicate', rule.duplicate, subject)) decision.duplicate = true;
      if (rule.reorder !== undefined && rule.reorder > 0 && decisions.chance('reorder', rule.reorder, subject)) decision.reorder = true;
      if (rule.delayMs !== undefined) decision.delayMs += decisions.uniform('fault-delay', rule.delayMs[0], rule.delayMs[1], subject);
    });
    return decision;
  }

  /** As the router: a reordered message is held until the next one on its link has gone. */
  private forward(packet: Packet, copies: number, reorder: boolean): void {
    const link = linkOf(packet);
    const held = this.held.get(link);
    if (reorder && held === undefined) {
      const holdMs = this.opts.reorderHoldMs;
      this.fault('reorder', packet, { reason: 'rule', holdMs });
      const timer = this.deps.scheduler.after(holdMs * 1000, () => this.release(link));
      this.held.set(link, { packet, copies, timer });
      return;
    }
    this.transmit(packet, copies);
    if (held !== undefined) this.release(link);
  }

  private release(link: string): void {
    const held = this.held.get(link);
    if (held === undefined) return;
    held.timer.cancel();
    this.held.delete(link);
    this.transmit(held.packet, held.copies);
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
    this.deps.emit({
      ts: this.deps.scheduler.now(),
      node: 'router',
      kind: 'fault',
      level: action === 'drop' ? 'warn' : 'info',
      msg: action,
      msgId: packet.msgId,
      peer: packet.to,
      fields: { from: packet.from, to: packet.to, type: packet.type, ...fields },
    });
  }
}

function linkOf(packet: Packet): string {
  return `${packet.from}\u0000${packet.to}`;
}

export function describe(packet: Packet): string {
  return `${packet.from}→${packet.to} ${packet.type} ${packet.msgId}`;
}
