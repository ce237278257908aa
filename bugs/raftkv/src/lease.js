// lease.js — the lessor, after etcd's lease package. Leases live in the
// backend; only the leader (the primary lessor) tracks expiry. When a lease
// runs out the leader proposes a revoke through raft, and applying the revoke
// deletes the lease and every key attached to it on every member.
//
// Lease checkpointing: the leader schedules checkpoints for long leases and,
// when one is due, proposes the TTL the lease has left (LeaseCheckpoint). A
// leader counts a checkpointed lease down from that remaining TTL instead of
// its full TTL; a keep-alive clears it.

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
    this.checkpointMs = Number(rt.config.leaseCheckpointMs ?? 5000);
    /** @type {Map<number, { id: number, ttl: number, remainingTtl: number, expiry: number, keys: Set<string> }>} remainingTtl 0: not checkpointed */
    this.leases = new Map();
    /** @type {Map<number, number>} lease id -> when its next checkpoint is due (on the primary) */
    this.checkpoints = new Map();
    for (const [, l] of be.range(LEASE)) this.leases.set(l.id, { id: l.id, ttl: l.ttl, remainingTtl: l.remainingTtl ?? 0, expiry: Infinity, keys: new Set() });
    for (const item of kv.range('')) if (item.lease) this.leases.get(item.lease)?.keys.add(item.key);
    kv.setLessor(this);
  }

  has(id) {
    return this.leases.has(id);
  }

  grant(id, ttl) {
    const l = { id, ttl, remainingTtl: 0, expiry: this.primary ? this.rt.now() + ttl * 1000 : Infinity, keys: new Set() };
    this.leases.set(id, l);
    this.#persist(l);
    if (this.primary) this.scheduleCheckpoint(l);
    return l;
  }

  /** Applies a LeaseCheckpoint: the remaining TTL a new leader will count down from (0 clears it). */
  checkpoint(id, remainingTtl) {
    const l = this.leases.get(id);
    if (!l) return;
    l.remainingTtl = remainingTtl;
    this.#persist(l);
    if (this.primary) this.scheduleCheckpoint(l);
  }

  /** TTL a lease counts down from when a leader takes it over: its checkpoint, or else its full TTL. */
  #startTtl(l) {
    return l.remainingTtl > 0 ? l.remainingTtl : l.ttl;
  }

  scheduleCheckpoint(l) {
    if (this.#startTtl(l) * 1000 > this.checkpointMs) this.checkpoints.set(l.id, this.rt.now() + this.checkpointMs);
  }

  /** On the primary: the checkpoints due now, as { id, remainingTtl } (seconds, rounded up). */
  dueCheckpoints() {
    if (!this.primary) return [];
    const now = this.rt.now();
    const due = [];
    for (const [id, at] of this.checkpoints) {
      if (at > now) continue;
      this.checkpoints.delete(id);
      const l = this.leases.get(id);
      if (!l || l.expiry <= now) continue;
      const remainingTtl = Math.ceil((l.expiry - now) / 1000);
      if (remainingTtl < l.ttl) due.push({ id, remainingTtl });
    }
    return due;
  }

  #persist(l) {
    this.be.batchTx.put(LEASE, String(l.id), { id: l.id, ttl: l.ttl, remainingTtl: l.remainingTtl });
  }

  /** Deletes the lease and its keys; returns the keys deleted. */
  revoke(id) {
    const l = this.leases.get(id);
    if (!l) return [];
    const keys = [...l.keys].sort();
    this.kv.deleteKeys(keys);
    this.leases.delete(id);
    this.checkpoints.delete(id);
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

  /** Whether a lease carries a checkpointed remaining TTL (a renewal must clear it). */
  checkpointed(id) {
    return (this.leases.get(id)?.remainingTtl ?? 0) > 0;
  }

  /** The lease's TTL and the seconds it has left, as the primary counts them; null if unknown. */
  timeToLive(id) {
    const l = this.leases.get(id);
    if (!l) return null;
    return { grantedTtl: l.ttl, ttl: Math.max(0, Math.ceil((l.expiry - this.rt.now()) / 1000)) };
  }

  attach(id, key) {
    this.leases.get(id)?.keys.add(key);
  }

  detach(id, key) {
    this.leases.get(id)?.keys.delete(key);
  }

  /** The new leader counts every lease down from its last checkpoint, or its full TTL if it has none. */
  promote() {
    this.primary = true;
    for (const l of this.leases.values()) {
      l.expiry = this.rt.now() + this.#startTtl(l) * 1000;
      this.scheduleCheckpoint(l);
    }
  }

  demote() {
    this.primary = false;
    this.checkpoints.clear();
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
      remainingTtl: l.remainingTtl,
      remainingMs: Number.isFinite(l.expiry) ? Math.max(0, Math.round(l.expiry - now)) : null,
      keys: [...l.keys],
    }));
  }
}
