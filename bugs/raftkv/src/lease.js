// lease.js — the lessor, after etcd's lease package. Leases live in the
// backend; only the leader (the primary lessor) tracks expiry. When a lease
// runs out the leader proposes a revoke through raft, and applying the revoke
// deletes the lease and every key attached to it on every member.

const LEASE = 'lease';

export class Lessor {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {import('./backend.js').Backend} be
   * @param {import('./kvstore.js').KVStore} kv
   */
  constructor(rt, be, kv) {
    this.rt = rt;
    this.be = be;
    this.kv = kv;
    this.primary = false;
    /** @type {Map<number, { id: number, ttl: number, expiry: number, keys: Set<string> }>} */
    this.leases = new Map();
    for (const [, l] of be.range(LEASE)) this.leases.set(l.id, { id: l.id, ttl: l.ttl, expiry: Infinity, keys: new Set() });
    for (const item of kv.range('')) if (item.lease) this.leases.get(item.lease)?.keys.add(item.key);
    kv.setLessor(this);
  }

  has(id) {
    return this.leases.has(id);
  }

  grant(id, ttl) {
    const l = { id, ttl, expiry: this.primary ? this.rt.now() + ttl * 1000 : Infinity, keys: new Set() };
    this.leases.set(id, l);
    this.be.batchTx.put(LEASE, String(id), { id, ttl });
    return l;
  }

  /** Deletes the lease and its keys; returns the keys deleted. */
  revoke(id) {
    const l = this.leases.get(id);
    if (!l) return [];
    const keys = [...l.keys].sort();
    this.kv.deleteKeys(keys);
    this.leases.delete(id);
    this.be.batchTx.delete(LEASE, String(id));
    return keys;
  }

  /** Extends a lease by its TTL from now; returns the TTL, or -1 if it is unknown. */
  renew(id) {
    const l = this.leases.get(id);
    if (!l) return -1;
    l.expiry = this.rt.now() + l.ttl * 1000;
    return l.ttl;
  }

  attach(id, key) {
    this.leases.get(id)?.keys.add(key);
  }

  detach(id, key) {
    this.leases.get(id)?.keys.delete(key);
  }

  /** The new leader gives every lease a full TTL, as it cannot know how long its predecessor had counted. */
  promote() {
    this.primary = true;
    for (const l of this.leases.values()) l.expiry = this.rt.now() + l.ttl * 1000;
  }

  demote() {
    this.primary = false;
    for (const l of this.leases.values()) l.expiry = Infinity;
  }

  expired() {
    const now = this.rt.now();
    return [...this.leases.values()].filter((l) => l.expiry <= now).map((l) => l.id);
  }

  list() {
    const now = this.rt.now();
    return [...this.leases.values()].map((l) => ({
      id: l.id,
      ttl: l.ttl,
      remainingMs: Number.isFinite(l.expiry) ? Math.max(0, Math.round(l.expiry - now)) : null,
      keys: [...l.keys],
    }));
  }
}
