/** Vector clocks: one counter per node; `a` happened before `b` iff a <= b component-wise and a != b. */
export type VectorClock = Record<string, number>;

/** The clock of one process: ticks on every local event, send and receive. */
export class VectorClockTracker {
  private readonly clock: VectorClock;

  /**
   * `start` continues the own counter of an earlier incarnation of the same node, so a
   * restarted node's events still order after everything it did before.
   */
  constructor(
    private readonly self: string,
    start = 0,
  ) {
    this.clock = { [self]: start };
  }

  /** Counts one local event (a log or a send) and returns the clock to stamp it with. */
  tick(): VectorClock {
    this.clock[this.self] = (this.clock[this.self] ?? 0) + 1;
    return this.snapshot();
  }

  /** Counts a receive: takes the component-wise maximum with the sender's clock, then ticks. */
  receive(remote: VectorClock): VectorClock {
    // for-in visits a plain object's keys in the order Object.entries lists them, without an array per entry.
    for (const node in remote) {
      const count = remote[node];
      if (count > (this.clock[node] ?? 0)) this.clock[node] = count;
    }
    return this.tick();
  }

  snapshot(): VectorClock {
    return { ...this.clock };
  }
}
