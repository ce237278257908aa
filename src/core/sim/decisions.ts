import { seededRandom, type Random } from '../../runtime/random';

/** Every kind of choice the scheduler makes from its seed. */
export type DecisionKind = 'latency' | 'timer-jitter' | 'spawn-delay' | 'drop' | 'duplicate' | 'reorder' | 'fault-delay';

/** One recorded choice: what it was about, the value used, and the value it takes when shrunk away. */
export interface Decision {
  /** Position in the run's sequence of draws. */
  index: number;
  kind: DecisionKind;
  /** Virtual µs at which it was drawn. */
  at: number;
  /** What it applied to, e.g. `n1→n2 MsgApp n1:17`. */
  subject: string;
  /** In the kind's unit: µs for latencies, jitter and spawn delays, ms for fault delays (as rules give them), 1 or 0 for chances. */
  value: number;
  fallback: number;
}

export interface DecisionSourceOptions {
  /**
   * Draws that keep their seeded value; every other draw takes its fallback (the
   * shortest delay, the likelier outcome). Undefined keeps every draw: the seed's run.
   */
  keep?: ReadonlySet<number>;
  /** Records every draw (for shrinking and for reports); off for fast seed search. */
  record?: boolean;
  now(): number;
}

/**
 * The scheduler's only source of randomness. Every draw advances the seeded stream
 * whether or not it is kept, so forcing one draw to its fallback leaves the values
 * of all later draws as they were: a schedule is fully given by (seed, keep).
 */
export class DecisionSource {
  private readonly random: Random;
  private count = 0;
  private readonly log: Decision[] | undefined;

  constructor(
    seed: number,
    private readonly opts: DecisionSourceOptions,
  ) {
    this.random = seededRandom(seed, 'sim', 'schedule');
    this.log = opts.record === true ? [] : undefined;
  }

  /** A whole number in [min, max], falling back to min. */
  uniform(kind: DecisionKind, min: number, max: number, subject: () => string): number {
    const u = this.random();
    const drawn = Math.round(min + u * (max - min));
    return this.take(kind, drawn, min, subject);
  }

  /** True with probability p, falling back to the likelier outcome. */
  chance(kind: DecisionKind, p: number, subject: () => string): boolean {
    const u = this.random();
    return this.take(kind, u < p ? 1 : 0, p >= 0.5 ? 1 : 0, subject) === 1;
  }

  /** How many draws the run made so far. */
  get drawn(): number {
    return this.count;
  }

  recorded(): readonly Decision[] {
    return this.log ?? [];
  }

  private take(kind: DecisionKind, drawn: number, fallback: number, subject: () => string): number {
    const index = this.count++;
    const keep = this.opts.keep;
    const value = keep === undefined || keep.has(index) ? drawn : fallback;
    this.log?.push({ index, kind, at: this.opts.now(), subject: subject(), value, fallback });
    return value;
  }
}
