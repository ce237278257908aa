// backend.js — a bucketed key-value backend, after etcd's mvcc/backend (bbolt
// underneath). Writes go to one long-running batch transaction that is
// readable at once and committed to disk as a unit every batchInterval (or
// when it holds batchLimit writes); a crash loses the uncommitted batch whole.

const DB_FILE = 'db';

export class Backend {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.disk = rt.disk;
    this.batchInterval = Number(rt.config.batchIntervalMs ?? 100);
    this.batchLimit = Number(rt.config.batchLimit ?? 10000);
    /** @type {Map<string, Map<string, any>>} */
    this.buckets = new Map();
    /** @type {Array<[string, string, any]>} */
    this.pending = [];
    for (const line of (this.disk.read(DB_FILE) ?? '').split('\n')) {
      if (!line) continue;
      let ops;
      try {
        ops = JSON.parse(line);
      } catch {
        break;
      }
      for (const [bucket, key, value] of ops) this.#set(bucket, key, value);
    }
    const write = (bucket, key, value) => {
      this.#set(bucket, key, value);
      this.pending.push([bucket, key, value]);
      if (this.pending.length >= this.batchLimit) this.commit();
    };
    this.batchTx = {
      put: (bucket, key, value) => write(bucket, key, value),
      delete: (bucket, key) => write(bucket, key, null),
    };
  }

  #set(bucket, key, value) {
    let b = this.buckets.get(bucket);
    if (!b) this.buckets.set(bucket, (b = new Map()));
    if (value === null) b.delete(key);
    else b.set(key, value);
  }

  get(bucket, key) {
    return this.buckets.get(bucket)?.get(key);
  }

  /** Entries of a bucket whose key starts with prefix, in key order. */
  range(bucket, prefix = '') {
    const b = this.buckets.get(bucket);
    if (!b) return [];
    return [...b.entries()].filter(([k]) => k.startsWith(prefix)).sort(([a], [c]) => (a < c ? -1 : a > c ? 1 : 0));
  }

  /** Commits the batch transaction: all its writes reach the disk together. */
  commit() {
    if (this.pending.length === 0) return;
    this.rt.log.debug('backend commit', { writes: this.pending.length });
    this.disk.append(DB_FILE, JSON.stringify(this.pending) + '\n');
    this.disk.sync();
    this.pending = [];
  }

  run() {
    const loop = () => {
      this.commit();
      this.rt.setTimer(this.batchInterval, loop);
    };
    this.rt.setTimer(this.batchInterval, loop);
  }
}
