// kvstore.js — a small multi-version key-value store, after etcd's mvcc
// package. Every write transaction gets the next revision; each key keeps its
// create and mod revisions, its version and its lease. The store also keeps
// the consistent index: the index of the last raft entry applied to it, so a
// restarted member knows which entries its backend already holds.

const KEY = 'key';
const META = 'meta';

export class KVStore {
  /** @param {import('./backend.js').Backend} be */
  constructor(be) {
    this.be = be;
    this.rev = be.get(META, 'revision') ?? 0;
    this.ci = be.get(META, 'consistent_index') ?? 0;
    /** @type {{ attach(id: number, key: string): void, detach(id: number, key: string): void } | null} */
    this.le = null;
  }

  setLessor(le) {
    this.le = le;
  }

  consistentIndex() {
    return this.ci;
  }

  setConsistentIndex(index) {
    this.ci = index;
    this.be.batchTx.put(META, 'consistent_index', index);
  }

  get(key) {
    return this.be.get(KEY, key);
  }

  range(prefix) {
    return this.be.range(KEY, prefix).map(([, kv]) => kv);
  }

  put(key, value, lease = 0) {
    const rev = this.#nextRev();
    const prev = this.get(key);
    const kv = {
      key,
      value,
      createRevision: prev ? prev.createRevision : rev,
      modRevision: rev,
      version: prev ? prev.version + 1 : 1,
      lease,
    };
    this.be.batchTx.put(KEY, key, kv);
    if (prev?.lease && prev.lease !== lease) this.le?.detach(prev.lease, key);
    if (lease) this.le?.attach(lease, key);
    return kv;
  }

  /** Deletes the given keys in one revision; returns how many existed. */
  deleteKeys(keys) {
    const existing = keys.map((k) => this.get(k)).filter(Boolean);
    if (existing.length === 0) return 0;
    this.#nextRev();
    for (const kv of existing) {
      this.be.batchTx.delete(KEY, kv.key);
      if (kv.lease) this.le?.detach(kv.lease, kv.key);
    }
    return existing.length;
  }

  #nextRev() {
    this.rev += 1;
    this.be.batchTx.put(META, 'revision', this.rev);
    return this.rev;
  }

  /** A hash of every key at the current revision, like etcd's HashKV. */
  hash() {
    let h = 0x811c9dc5;
    const feed = (s) => {
      for (let i = 0; i < s.length; i++) {
        h ^= s.charCodeAt(i);
        h = Math.imul(h, 0x01000193) >>> 0;
      }
    };
    feed(String(this.rev));
    for (const kv of this.range('')) feed(`|${kv.key}=${kv.value}@${kv.createRevision}/${kv.modRevision}/${kv.lease}`);
    return h.toString(16).padStart(8, '0');
  }
}
