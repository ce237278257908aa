// mvcc.js — a multi-version key-value engine, after CockroachDB's pkg/storage
// (MVCCGet, MVCCPut, MVCCScan): every key keeps its versions by timestamp, and
// a read at ts sees, per key, the newest version at or below ts.

import { less, lessEq, fmt } from './hlc.js';

/** @typedef {import('./hlc.js').Timestamp} Timestamp */

export class Engine {
  constructor() {
    /** @type {Map<string, Array<{ ts: Timestamp, value: string }>>} versions, oldest first */
    this.keys = new Map();
  }

  mvccPut(key, ts, value) {
    let vs = this.keys.get(key);
    if (!vs) this.keys.set(key, (vs = []));
    let i = vs.length;
    while (i > 0 && less(ts, vs[i - 1].ts)) i--;
    vs.splice(i, 0, { ts, value });
  }

  mvccGet(key, ts) {
    const vs = this.keys.get(key) ?? [];
    for (let i = vs.length - 1; i >= 0; i--) if (lessEq(vs[i].ts, ts)) return vs[i];
    return null;
  }

  /** The newest version's timestamp of key, whatever it is. */
  latest(key) {
    const vs = this.keys.get(key);
    return vs?.length ? vs[vs.length - 1].ts : null;
  }

  mvccScan(start, end, ts) {
    const rows = [];
    for (const key of this.sortedKeys(start, end)) {
      const v = this.mvccGet(key, ts);
      if (v) rows.push({ key, value: v.value });
    }
    return rows;
  }

  /** Whether any version in [start, end) has a timestamp in (from, to] (a read refresh fails then). */
  hasWriteIn(start, end, from, to) {
    for (const key of this.sortedKeys(start, end)) {
      for (const v of this.keys.get(key)) if (less(from, v.ts) && lessEq(v.ts, to)) return true;
    }
    return false;
  }

  sortedKeys(start, end) {
    return [...this.keys.keys()].filter((k) => start <= k && k < end).sort();
  }

  /** Every key's newest value in [start, end), with its timestamp. */
  dump(start, end) {
    const out = {};
    for (const key of this.sortedKeys(start, end)) {
      const vs = this.keys.get(key);
      out[key] = { value: vs[vs.length - 1].value, ts: fmt(vs[vs.length - 1].ts) };
    }
    return out;
  }
}
