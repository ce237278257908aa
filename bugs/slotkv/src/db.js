// db.js — the keyspace (db.c) and key expiry (expire.c). Keys carry an
// absolute expire time; a master deletes expired keys lazily when they are
// read and actively in activeExpireCycle, and propagates each delete to its
// replicas as a DEL. Replicas never expire keys themselves.

export const SLOTS = 16;

/** keyHashSlot: the slot of a key (a hash tag {..} picks the hashed part). */
export function keyHashSlot(key) {
  const s = key.indexOf('{');
  const e = s >= 0 ? key.indexOf('}', s + 1) : -1;
  const part = e > s + 1 ? key.slice(s + 1, e) : key;
  let h = 0;
  for (let i = 0; i < part.length; i++) h = (h * 31 + part.charCodeAt(i)) >>> 0;
  return h % SLOTS;
}

export class Db {
  constructor() {
    /** @type {Map<string, {value: string, expireAt: number}>} expireAt 0: no expiry */
    this.dict = new Map();
  }

  get size() {
    return this.dict.size;
  }

  lookup(key) {
    return this.dict.get(key);
  }

  set(key, value, expireAt = 0) {
    this.dict.set(key, { value, expireAt });
  }

  delete(key) {
    return this.dict.delete(key);
  }

  isExpired(entry, now) {
    return entry.expireAt !== 0 && entry.expireAt <= now;
  }

  /** Up to `limit` keys whose time has passed. */
  expiredKeys(now, limit) {
    const out = [];
    for (const [key, entry] of this.dict) {
      if (this.isExpired(entry, now)) out.push(key);
      if (out.length >= limit) break;
    }
    return out;
  }

  snapshot() {
    return [...this.dict].map(([k, v]) => [k, v.value, v.expireAt]);
  }

  load(snapshot) {
    this.dict = new Map(snapshot.map(([k, value, expireAt]) => [k, { value, expireAt }]));
  }

  /** An order-independent digest of the keyspace, like DEBUG DIGEST. */
  digest() {
    let h = 0;
    for (const [k, v] of this.dict) {
      let x = 0;
      const s = `${k}=${v.value}`;
      for (let i = 0; i < s.length; i++) x = (x * 33 + s.charCodeAt(i)) >>> 0;
      h = (h + x) >>> 0;
    }
    return h.toString(16);
  }
}
