// log.js — after Kafka's Log, LeaderEpochFileCache, ProducerStateManager and
// OffsetCheckpoint: the partition's records on disk (each stamped with the
// leader epoch that wrote it; a transactional record also with its producer id
// and epoch, and a transaction marker as a control record), the
// leader-epoch-checkpoint (epoch → start offset), the producers' state rebuilt
// from the log (open transactions and where they start, aborted transactions),
// and the replication-offset-checkpoint holding the high watermark, written
// periodically. Appends are flushed (fsync) at once, or, with a flush interval
// (log.flush.interval.ms), left to the broker's periodic flush.

const LOG = 'events-0.log';
const EPOCHS = 'leader-epoch-checkpoint';
const HW = 'replication-offset-checkpoint';

export const UNDEFINED_OFFSET = -1;
export const UNDEFINED_EPOCH = -1;

export class LeaderEpochFileCache {
  constructor(disk) {
    this.disk = disk;
    /** @type {Array<{ epoch: number, startOffset: number }>} */
    this.epochs = JSON.parse(disk.read(EPOCHS) ?? '[]');
  }

  latestEpoch() {
    return this.epochs.length ? this.epochs[this.epochs.length - 1].epoch : -1;
  }

  /** Records that `epoch` starts at `startOffset` (called when a record of a new epoch is appended). */
  assign(epoch, startOffset) {
    if (epoch <= this.latestEpoch()) return;
    this.epochs.push({ epoch, startOffset });
    this.flush();
  }

  /**
   * The largest known epoch at or below `epoch` and its end offset: the start of the next
   * higher epoch, or logEndOffset for the latest. UNDEFINED_EPOCH and UNDEFINED_OFFSET if none.
   */
  endOffsetFor(epoch, logEndOffset) {
    const i = this.epochs.findLastIndex((e) => e.epoch <= epoch);
    if (i < 0) return { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_OFFSET };
    const next = this.epochs[i + 1];
    return { epoch: this.epochs[i].epoch, endOffset: next ? next.startOffset : logEndOffset };
  }

  truncateFromEnd(offset) {
    const before = this.epochs.length;
    this.epochs = this.epochs.filter((e) => e.startOffset < offset);
    if (this.epochs.length !== before) this.flush();
  }

  flush() {
    this.disk.write(EPOCHS, JSON.stringify(this.epochs));
    this.disk.sync();
  }
}

/**
 * After Kafka's ProducerStateManager: per producer id, its latest epoch and the first
 * offset of its open transaction on this partition; and the aborted transactions (the
 * transaction index). Derived from the records, so it is rebuilt on load and truncation.
 */
export class ProducerStateManager {
  constructor() {
    /** @type {Map<number, number>} producer id → latest producer epoch */
    this.producerEpochs = new Map();
    /** @type {Map<number, number>} producer id → first offset of its open transaction */
    this.ongoingTxns = new Map();
    /** @type {Array<{ producerId: number, firstOffset: number, lastOffset: number }>} */
    this.abortedTxns = [];
  }

  update(rec) {
    if (rec.producerId === undefined) return;
    const pid = rec.producerId;
    this.producerEpochs.set(pid, Math.max(rec.producerEpoch, this.producerEpochs.get(pid) ?? -1));
    if (rec.control) {
      const firstOffset = this.ongoingTxns.get(pid);
      if (firstOffset === undefined) return;
      this.ongoingTxns.delete(pid);
      if (rec.control === 'ABORT') this.abortedTxns.push({ producerId: pid, firstOffset, lastOffset: rec.offset });
    } else if (!this.ongoingTxns.has(pid)) {
      this.ongoingTxns.set(pid, rec.offset);
    }
  }

  /** The first offset of the earliest open transaction, or null. */
  firstUnstableOffset() {
    return this.ongoingTxns.size ? Math.min(...this.ongoingTxns.values()) : null;
  }

  /** Aborted transactions that overlap [from, upTo). */
  abortedIn(from, upTo) {
    return this.abortedTxns.filter((a) => a.firstOffset < upTo && a.lastOffset >= from);
  }
}

export class Log {
  /** @param {DDBench.Disk} disk the node's disk (rt.disk) */
  constructor(disk) {
    this.disk = disk;
    /** @type {Array<{ offset: number, epoch: number, key: string, value: string, producerId?: number, producerEpoch?: number, control?: string }>} */
    this.records = [];
    for (const line of (disk.read(LOG) ?? '').split('\n')) {
      if (!line) continue;
      try {
        const r = JSON.parse(line);
        if (r.offset === this.records.length) this.records.push(r);
      } catch {
        break; // a torn tail record
      }
    }
    this.leaderEpochCache = new LeaderEpochFileCache(disk);
    this.leaderEpochCache.truncateFromEnd(this.logEndOffset());
    this.rebuildProducerState();
    /** false with a flush interval: appended records reach the disk only at the next flush() */
    this.flushOnAppend = true;
    /** the offset below which the log is known to be flushed */
    this.recoveryPoint = this.logEndOffset();
  }

  rebuildProducerState() {
    this.producerState = new ProducerStateManager();
    for (const r of this.records) this.producerState.update(r);
  }

  logEndOffset() {
    return this.records.length;
  }

  /** Appends records, assigning offsets from the log end, and flushes them unless flushing is periodic. */
  append(batch) {
    const out = [];
    for (const r of batch) {
      const rec = { offset: this.records.length, epoch: r.epoch, key: r.key, value: r.value };
      if (r.producerId !== undefined) Object.assign(rec, { producerId: r.producerId, producerEpoch: r.producerEpoch });
      if (r.control) rec.control = r.control;
      this.leaderEpochCache.assign(rec.epoch, rec.offset);
      this.producerState.update(rec);
      this.records.push(rec);
      out.push(rec);
    }
    if (out.length) {
      this.disk.append(LOG, out.map((r) => JSON.stringify(r) + '\n').join(''));
      if (this.flushOnAppend) this.flush();
    }
    return out;
  }

  /** Forces what was appended to disk (the periodic flush). */
  flush() {
    this.disk.sync();
    this.recoveryPoint = this.logEndOffset();
  }

  read(from, max = 100, upTo = this.records.length) {
    return this.records.slice(from, Math.min(upTo, from + max));
  }

  /** Removes every record at or above `offset`. */
  truncateTo(offset) {
    if (offset >= this.records.length) return;
    this.records.length = Math.max(0, offset);
    this.disk.write(LOG, this.records.map((r) => JSON.stringify(r) + '\n').join(''));
    this.flush();
    this.leaderEpochCache.truncateFromEnd(offset);
    this.rebuildProducerState();
  }

  readHighWatermarkCheckpoint() {
    return Math.min(Number(this.disk.read(HW) ?? 0), this.logEndOffset());
  }

  checkpointHighWatermark(hw) {
    this.disk.write(HW, String(hw));
    this.disk.sync();
  }

  digest() {
    let h = 0x811c9dc5;
    for (const r of this.records) {
      const s = `|${r.offset}:${r.epoch}:${r.producerId ?? ''}:${r.control ?? ''}:${r.key}=${r.value}`;
      for (let i = 0; i < s.length; i++) {
        h ^= s.charCodeAt(i);
        h = Math.imul(h, 0x01000193) >>> 0;
      }
    }
    return h.toString(16).padStart(8, '0');
  }
}
