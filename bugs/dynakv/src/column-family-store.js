// column-family-store.js — after Cassandra's ColumnFamilyStore, Memtable, CommitLog and
// compaction, with ScyllaDB's shards. Every mutation goes to the memtable and is
// appended to the commit log and synced before it is acknowledged. A flush writes the
// memtable to a new immutable sstable and empties the commit log. The node's keys are
// split among `smp` shards by token; an sstable holding keys of several shards is
// shared: each of those shards reads and compacts its own part of it, and the file
// stays on disk while some shard still uses it. A deletion is a tombstone cell; reads
// merge the memtable and the shard's sstables, newest cell first. Compaction merges
// a shard's sstables and drops a tombstone once it is older than gc grace and
// shadows no data that could still be read.

import { token } from './token-metadata.js';

/** @typedef {{value: string | null, timestamp: number, deletedAt?: number}} Cell a value, or a tombstone (value null) with the time it was written */
/** @typedef {{generation: number, cells: Map<string, Cell>, owners: Set<number>}} SSTable an sstable and the shards that still use it */

export function isTombstone(cell) {
  return cell !== null && cell.value === null;
}

/** The cell that wins of two: the newer; on a tie a tombstone, then the larger value. */
export function reconcile(a, b) {
  if (!a) return b;
  if (!b) return a;
  if (a.timestamp !== b.timestamp) return a.timestamp > b.timestamp ? a : b;
  if (isTombstone(a) !== isTombstone(b)) return isTombstone(a) ? a : b;
  return isTombstone(a) || a.value >= b.value ? a : b;
}

/** A cell as a mutation or a hint carries it. */
export function cellOf({ value, timestamp, deletedAt }) {
  return value === null ? { value: null, timestamp, deletedAt } : { value, timestamp };
}

export class ColumnFamilyStore {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.smp = Number(rt.config.smp ?? 2);
    this.gcGraceMs = Number(rt.config.gcGraceMs ?? 5000);
    this.minThreshold = Number(rt.config.compactionMinThreshold ?? 4);
    /** @type {Map<string, Cell>} */
    this.memtable = new Map();
    /** @type {Map<number, SSTable>} every sstable on disk, by generation */
    this.sstables = new Map();
    /** @type {Set<Set<SSTable>>} compactions' inputs waiting to be deleted together */
    this.pendingDeletions = new Set();
    this.generation = 0;
  }

  shardOf(key) {
    return token(key) % this.smp;
  }

  ownersOf(cells) {
    return new Set([...cells.keys()].map((k) => this.shardOf(k)));
  }

  /** Loads the sstables on disk (each shard uses those that hold its keys) and replays the commit log. */
  open() {
    for (const file of this.rt.disk.list()) {
      if (!file.startsWith('sstable-')) continue;
      const generation = Number(file.slice('sstable-'.length));
      const cells = new Map(JSON.parse(this.rt.disk.read(file) ?? '[]'));
      this.sstables.set(generation, { generation, cells, owners: this.ownersOf(cells) });
      this.generation = Math.max(this.generation, generation);
    }
    const text = this.rt.disk.read('commitlog') ?? '';
    let replayed = 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const m = JSON.parse(line);
        this.applyLocal(m.key, cellOf(m));
        replayed++;
      } catch {
        break;
      }
    }
    return { sstables: this.sstables.size, replayed };
  }

  /** Applies a cell to the memtable if it wins over the one there. */
  applyLocal(key, cell) {
    const cur = this.memtable.get(key) ?? null;
    if (cur && reconcile(cur, cell) === cur) return false;
    this.memtable.set(key, cell);
    return true;
  }

  apply(key, cell) {
    const changed = this.applyLocal(key, cell);
    if (changed) {
      this.rt.disk.append('commitlog', JSON.stringify({ key, ...cell }) + '\n');
      this.rt.disk.sync();
    }
    return changed;
  }

  /** The newest cell of a key (a tombstone included) over the memtable and the key's shard's sstables. */
  get(key) {
    const shard = this.shardOf(key);
    let cell = this.memtable.get(key) ?? null;
    for (const sst of this.sstables.values()) if (sst.owners.has(shard)) cell = reconcile(cell, sst.cells.get(key) ?? null);
    return cell;
  }

  /** Every key's newest cell, tombstones included, sorted by key. */
  merged() {
    const keys = new Set(this.memtable.keys());
    for (const sst of this.sstables.values()) for (const k of sst.cells.keys()) keys.add(k);
    const out = new Map();
    for (const k of [...keys].sort()) {
      const c = this.get(k);
      if (c) out.set(k, c);
    }
    return out;
  }

  liveSSTables(shard) {
    return [...this.sstables.values()].filter((s) => s.owners.has(shard));
  }

  // ---- flush and compaction ----

  writeSSTable(cells) {
    const generation = ++this.generation;
    this.rt.disk.write(`sstable-${generation}`, JSON.stringify([...cells]));
    this.rt.disk.sync();
    const sst = { generation, cells, owners: this.ownersOf(cells) };
    this.sstables.set(generation, sst);
    return sst;
  }

  deleteSSTable(sst) {
    this.rt.disk.remove(`sstable-${sst.generation}`);
    this.rt.disk.sync();
    this.sstables.delete(sst.generation);
    this.rt.log.debug('deleted sstable', { generation: sst.generation });
  }

  /**
   * Deletes a compaction's inputs together, once no shard uses any of them: a tombstone
   * in one may have dropped data in another. Sets that share an sstable are merged.
   */
  deleteAtomically(inputs) {
    const set = new Set(inputs);
    for (const pending of [...this.pendingDeletions]) {
      if (![...pending].some((s) => set.has(s))) continue;
      for (const s of pending) set.add(s);
      this.pendingDeletions.delete(pending);
    }
    if ([...set].some((s) => s.owners.size > 0)) this.pendingDeletions.add(set);
    else for (const s of set) this.deleteSSTable(s);
  }

  /** nodetool flush: the memtable becomes an sstable; then each shard it touches may compact. */
  flush() {
    if (this.memtable.size === 0) return null;
    const sst = this.writeSSTable(this.memtable);
    this.memtable = new Map();
    this.rt.disk.write('commitlog', '');
    this.rt.disk.sync();
    this.rt.log.info('flushed memtable', { generation: sst.generation, cells: sst.cells.size, shards: [...sst.owners].sort() });
    for (const shard of [...sst.owners].sort()) {
      const candidates = this.liveSSTables(shard);
      if (candidates.length >= this.minThreshold) this.compact(shard, candidates);
    }
    return sst.generation;
  }

  /** nodetool compact: a major compaction of every shard. */
  majorCompaction() {
    for (let shard = 0; shard < this.smp; shard++) {
      const all = this.liveSSTables(shard);
      if (all.length > 0) this.compact(shard, all);
    }
  }

  /**
   * The timestamp a tombstone of `key` must be older than to be dropped: the oldest
   * cell of the key in the memtable and in the `others` sstables.
   */
  maxPurgeableTimestamp(key, others) {
    let ts = this.memtable.get(key)?.timestamp ?? Infinity;
    for (const sst of others) {
      const c = sst.cells.get(key);
      if (c) ts = Math.min(ts, c.timestamp);
    }
    return ts;
  }

  /** Merges the shard's part of `inputs` into one sstable of that shard, dropping tombstones past gc grace. */
  compact(shard, inputs) {
    const now = this.rt.now();
    // Every sstable still on disk counts, also those compacted but not yet deleted: a restart reads them again.
    const others = [...this.sstables.values()].filter((s) => !inputs.includes(s));
    const merged = new Map();
    for (const sst of inputs) {
      for (const [key, cell] of sst.cells) if (this.shardOf(key) === shard) merged.set(key, reconcile(merged.get(key) ?? null, cell));
    }
    let purged = 0;
    for (const [key, cell] of [...merged]) {
      if (!isTombstone(cell) || now - (cell.deletedAt ?? now) <= this.gcGraceMs) continue;
      if (cell.timestamp >= this.maxPurgeableTimestamp(key, others)) continue;
      merged.delete(key);
      purged++;
    }
    const out = merged.size > 0 ? this.writeSSTable(merged) : null;
    for (const sst of inputs) sst.owners.delete(shard);
    this.deleteAtomically(inputs);
    this.rt.log.info('compacted sstables', {
      shard,
      inputs: inputs.map((s) => s.generation),
      output: out?.generation ?? null,
      cells: merged.size,
      purgedTombstones: purged,
    });
  }

  // ---- what the state shows ----

  /** Tombstones still stored, counted once per shard that reads them. */
  tombstoneCount() {
    let n = 0;
    for (const c of this.memtable.values()) if (isTombstone(c)) n++;
    for (const sst of this.sstables.values()) for (const [k, c] of sst.cells) if (isTombstone(c) && sst.owners.has(this.shardOf(k))) n++;
    return n;
  }

  describe() {
    return [...this.sstables.values()].map((s) => ({ generation: s.generation, cells: s.cells.size, shards: [...s.owners].sort() }));
  }

  hash() {
    let h = 0;
    for (const [k, c] of this.merged()) {
      if (isTombstone(c)) continue;
      const s = `${k}=${c.value}@${c.timestamp};`;
      for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
    }
    return (h >>> 0).toString(16);
  }
}
