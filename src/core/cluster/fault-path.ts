import type { EventInput } from '../events/event';
import type { FaultTable } from './fault-table';
import type { FaultDecision, MessageKey } from './link-faults';
import type { LinkFault } from './types';

/** What a fault did to a message, as the router's fault events (and router.jsonl) name it. */
export type FaultAction = 'drop' | 'duplicate' | 'delay' | 'reorder';

export interface FaultPathDeps<M extends MessageKey> {
  faults: FaultTable;
  /** What the rules do to a message the partition let through (see applyRules). */
  decide(msg: M, rules: readonly LinkFault[]): FaultDecision;
  /** Runs `fn` in `ms` milliseconds (real or virtual). */
  after(ms: number, fn: () => void): { cancel(): void };
  /** Sends `copies` copies of the message on to its destination. */
  deliver(msg: M, copies: number): void;
  /** Reports what a fault did to the message. */
  fault(action: FaultAction, msg: M, fields: Record<string, string | number>): void;
  /** How long a reordered message waits for the next message on its link before it goes anyway. */
  reorderHoldMs: number;
}

interface Held<M> {
  msg: M;
  copies: number;
  timer: { cancel(): void };
}

/**
 * A message's way through a router, live or simulated: the partition may cut it, then
 * the link-fault rules may drop, duplicate, delay or reorder it. Both routers take
 * this one way, so a fault means the same on both backends.
 */
export class FaultPath<M extends MessageKey> {
  private readonly held = new Map<string, Held<M>>();

  constructor(private readonly deps: FaultPathDeps<M>) {}

  send(msg: M): void {
    const { faults } = this.deps;
    if (faults.cuts(msg.from, msg.to)) {
      this.deps.fault('drop', msg, { reason: 'partition' });
      return;
    }
    const decision = this.deps.decide(msg, faults.linkFaults());
    if (decision.dropRule !== undefined) {
      this.deps.fault('drop', msg, { reason: 'rule', rule: decision.dropRule });
      return;
    }
    const copies = decision.duplicate ? 2 : 1;
    if (decision.duplicate) this.deps.fault('duplicate', msg, { reason: 'rule' });
    if (decision.delayMs > 0) {
      this.deps.fault('delay', msg, { reason: 'rule', delayMs: decision.delayMs });
      this.deps.after(decision.delayMs, () => this.forward(msg, copies, decision.reorder));
    } else {
      this.forward(msg, copies, decision.reorder);
    }
  }

  /** Forgets held messages without delivering them (the router is closing). */
  dropHeld(): void {
    for (const held of this.held.values()) held.timer.cancel();
    this.held.clear();
  }

  /**
   * Delivers a message on its link, or holds it back until the next message on the
   * link has been delivered (reorder). A message arriving while another is held is the
   * "next one": it goes first, then the held one, so reordering swaps neighbours.
   */
  private forward(msg: M, copies: number, reorder: boolean): void {
    const link = linkOf(msg);
    const held = this.held.get(link);
    if (reorder && held === undefined) {
      const holdMs = this.deps.reorderHoldMs;
      this.deps.fault('reorder', msg, { reason: 'rule', holdMs });
      const timer = this.deps.after(holdMs, () => this.release(link));
      this.held.set(link, { msg, copies, timer });
      return;
    }
    this.deps.deliver(msg, copies);
    if (held !== undefined) this.release(link);
  }

  private release(link: string): void {
    const held = this.held.get(link);
    if (held === undefined) return;
    held.timer.cancel();
    this.held.delete(link);
    this.deps.deliver(held.msg, held.copies);
  }
}

/** The router's fault event for a message. */
export function faultEvent(ts: number, action: FaultAction, msg: MessageKey, fields: Record<string, string | number>): EventInput {
  return {
    ts,
    node: 'router',
    kind: 'fault',
    level: action === 'drop' ? 'warn' : 'info',
    msg: action,
    msgId: msg.msgId,
    peer: msg.to,
    fields: { from: msg.from, to: msg.to, type: msg.type, ...fields },
  };
}

export function linkOf(msg: MessageKey): string {
  return `${msg.from}\u0000${msg.to}`;
}
