import type { Json } from '../../runtime/types';
import { checkLinkFault, isCut, partitionIndex } from './link-faults';
import type { LinkFault } from './types';

/** The partition and link-fault rules in force, as the harness set them; a router (live or simulated) reads them for every message. */
export class FaultTable {
  private groups = new Map<string, number>();
  private rules: LinkFault[] = [];

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

  /** Whether the partition cuts the link from `from` to `to`. */
  cuts(from: string, to: string): boolean {
    return isCut(this.groups, from, to);
  }

  /** The link-fault rules, in the order they were added. */
  linkFaults(): readonly LinkFault[] {
    return this.rules;
  }
}

/** A link fault as the harness's `link fault` event shows it. */
export function linkFaultFields(fault: LinkFault): Record<string, Json> {
  const { delayMs, ...rest } = fault;
  return { ...rest, ...(delayMs && { delayMs: [...delayMs] }) };
}
