import type { Event } from '../events/event';
import type { Json } from '../../runtime/types';
import type { ClusterControls, NodeInfo } from '../cluster/types';

/**
 * What a reproducer scenario gets. A scenario module's default export is a
 * `Scenario`; it drives the cluster only through this context (the cluster's
 * controls, plus waits and checks), so it runs live or simulated unchanged. A failed
 * `check` ends the trial with verdict `fail`.
 */
export interface ScenarioContext extends ClusterControls {
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
  /** A deadline `ms` from now on the scenario's clock, for loops that give up. */
  deadline(ms: number): Deadline;
  /**
   * Calls `cond` now and then every `everyMs` (default 100) until it returns a truthy value,
   * and resolves with that value; past `timeoutMs` rejects with the ProgressTimeout a
   * `waitFor` gives, `description` saying what did not happen.
   */
  until<T>(cond: () => T | Promise<T>, opts: { timeoutMs: number; everyMs?: number; description: string }): Promise<Truthy<Awaited<T>>>;
  /**
   * Runs `fn` alongside the scenario (a wait begun before the action it watches, a
   * keep-alive loop) and gives its promise. If it rejects before the scenario ends, the
   * trial fails with that error, whether or not the scenario awaits the promise.
   */
  background<T>(fn: () => Promise<T>): Promise<T>;
  events(): readonly Event[];
  nodeInfo(): NodeInfo[];
  /** Records a harness note on the timeline. */
  note(msg: string, fields?: Record<string, Json>): void;
  /** Records an invariant check; throws InvariantViolation when `ok` is false. */
  check(name: string, ok: boolean, details?: Record<string, Json>): void;
}

/** `expired` turns true once the deadline has passed on the scenario's clock. */
export interface Deadline {
  readonly expired: boolean;
}

export type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

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
