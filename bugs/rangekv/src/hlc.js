// hlc.js — a hybrid logical clock, after CockroachDB's pkg/util/hlc. A
// timestamp is a wall time in ms plus a logical counter. Now() never goes
// backwards and moves past every timestamp the clock has been updated with;
// Update() only forwards the clock (it never ticks it).

/** @typedef {{ wall: number, logical: number }} Timestamp */

export const zero = Object.freeze({ wall: 0, logical: 0 });

export function less(a, b) {
  return a.wall < b.wall || (a.wall === b.wall && a.logical < b.logical);
}

export function equal(a, b) {
  return a.wall === b.wall && a.logical === b.logical;
}

export function lessEq(a, b) {
  return !less(b, a);
}

export function next(ts) {
  return { wall: ts.wall, logical: ts.logical + 1 };
}

export function forward(a, b) {
  return less(a, b) ? b : a;
}

export function fmt(ts) {
  return `${ts.wall}.${String(ts.logical).padStart(10, '0')}`;
}

export class Clock {
  /** @param {() => number} physical the node's physical clock in ms */
  constructor(physical) {
    this.physical = () => Math.floor(physical());
    this.ts = { wall: 0, logical: 0 };
  }

  /** A new timestamp, greater than every one this clock has issued or seen. */
  now() {
    const p = this.physical();
    if (p > this.ts.wall) this.ts = { wall: p, logical: 0 };
    else this.ts = { wall: this.ts.wall, logical: this.ts.logical + 1 };
    return this.ts;
  }

  /** The clock's current reading, without issuing a timestamp (what RPC headers carry). */
  peek() {
    const p = this.physical();
    return p > this.ts.wall ? { wall: p, logical: 0 } : this.ts;
  }

  /** Forwards the clock to a timestamp received from another node. */
  update(ts) {
    if (ts && less(this.ts, ts)) this.ts = { wall: ts.wall, logical: ts.logical };
  }
}
