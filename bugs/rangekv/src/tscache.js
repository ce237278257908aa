// tscache.js — the timestamp cache, after CockroachDB's timestampCache
// (storage/timestamp_cache.go, 2016): the leaseholder remembers, per key span,
// the highest timestamp at which it was read and by which transaction. A
// write below that timestamp must move above it, unless the read was the
// writer's own. Below the low water mark nothing is known: everything there
// counts as read at lowWater.

import { less, equal, fmt } from './hlc.js';

/** @typedef {import('./hlc.js').Timestamp} Timestamp */

const covers = (e, start, end) => e.start <= start && end <= e.end;
const overlaps = (e, start, end) => e.start < end && start < e.end;

export class TimestampCache {
  /** @param {Timestamp} lowWater */
  constructor(lowWater) {
    this.lowWater = lowWater;
    /** @type {Array<{ start: string, end: string, ts: Timestamp, txnID: string | null }>} */
    this.entries = [];
  }

  /** Records a read of [start, end) at ts by txnID (null for a non-transactional read). */
  add(start, end, ts, txnID) {
    if (!less(this.lowWater, ts)) return;
    for (const e of this.entries) {
      if (!covers(e, start, end)) continue;
      if (less(ts, e.ts) || (equal(ts, e.ts) && e.txnID === txnID)) return; // redundant
      if (equal(ts, e.ts)) txnID = null; // two readers at one timestamp: neither owns it
    }
    // Entries the new one makes redundant.
    this.entries = this.entries.filter((e) => !(covers({ start, end }, e.start, e.end) && (less(e.ts, ts) || (equal(e.ts, ts) && e.txnID === txnID))));
    this.entries.push({ start, end, ts, txnID });
  }

  /**
   * The highest read timestamp over [start, end), and the transaction that read
   * there if exactly one did (null otherwise).
   * @returns {{ ts: Timestamp, txnID: string | null }}
   */
  getMax(start, end) {
    let max = { ts: this.lowWater, txnID: null };
    for (const e of this.entries) {
      if (!overlaps(e, start, end)) continue;
      if (less(max.ts, e.ts)) max = { ts: e.ts, txnID: e.txnID };
      else if (equal(max.ts, e.ts) && max.txnID !== e.txnID) max = { ts: e.ts, txnID: null };
    }
    return max;
  }

  /** Drops entries at or below ts into the low water mark (bounds the cache's size). */
  setLowWater(ts) {
    if (less(this.lowWater, ts)) this.lowWater = ts;
    this.entries = this.entries.filter((e) => less(this.lowWater, e.ts));
  }

  list() {
    return { lowWater: fmt(this.lowWater), entries: this.entries.slice(-20).map((e) => ({ span: [e.start, e.end], ts: fmt(e.ts), txnID: e.txnID })) };
  }
}
