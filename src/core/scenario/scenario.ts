import type { Event } from '../events/event';
import type { Json } from '../../runtime/types';
import type { ClusterClient, LinkFault, NodeInfo } from '../cluster/types';

/**
 * What a reproducer scenario gets. A scenario module's default export is a
 * `Scenario`; it drives the cluster only through this context, so it runs live or
 * simulated unchanged. A failed `check` ends the trial with verdict `fail`.
 */
export interface ScenarioContext {
  readonly seed: number;
  readonly nodes: readonly string[];
  /** Seeded randomness for the scenario's own choices. */
  random(): number;
  sleep(ms: number): Promise<void>;
  /**
   * Resolves with the first event (from now on, or among past events with `includePast`)
   * matching `pred`; rejects after `timeoutMs` with `description` in the message.
   */
  waitFor(pred: (e: Event) => boolean, opts: { timeoutMs: number; description: string; includePast?: boolean }): Promise<Event>;
  events(): readonly Event[];
  nodeInfo(): NodeInfo[];
  state(node: string): Promise<Json>;
  client(name: string): Promise<ClusterClient>;
  kill(node: string): Promise<void>;
  restart(node: string): Promise<void>;
  pause(node: string): Promise<void>;
  resume(node: string): Promise<void>;
  partition(groups: string[][]): void;
  heal(): void;
  addLinkFault(fault: LinkFault): void;
  clearLinkFaults(): void;
  skewClock(node: string, offsetMs: number): void;
  /** Records a harness note on the timeline. */
  note(msg: string, fields?: Record<string, Json>): void;
  /** Records an invariant check; throws InvariantViolation when `ok` is false. */
  check(name: string, ok: boolean, details?: Record<string, Json>): void;
}

export interface Scenario {
  name: string;
  description: string;
  /** Budget for one trial; past it the trial's verdict is `timeout`. */
  timeoutMs: number;
  /** Overrides merged into the system's node config for this scenario. */
  config?: Record<string, Json>;
  run(t: ScenarioContext): Promise<void>;
}

export class InvariantViolation extends Error {
  constructor(
    readonly check: string,
    readonly details: Record<string, Json>,
  ) {
    super(`invariant violated: ${check}`);
    this.name = 'InvariantViolation';
  }
}
