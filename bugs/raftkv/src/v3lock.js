// v3lock.js — the server-side lock service, after etcd's v3lock and the
// concurrency.Mutex it uses. A caller holding a lease puts the key
// lock/<name>/<lease id in hex> (unless it already exists) and waits: it owns
// the lock once no key under lock/<name>/ has a lower create revision than its
// own. Unlock deletes the key; so does the lease running out.

export function lockPrefix(name) {
  return `lock/${name}/`;
}

export class LockServer {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {import('./kvstore.js').KVStore} kv
   * @param {import('./lease.js').Lessor} lessor
   */
  constructor(rt, kv, lessor) {
    this.rt = rt;
    this.kv = kv;
    this.lessor = lessor;
    /** @type {Array<{ name: string, key: string, rev: number, done: (r: any) => void }>} */
    this.waiters = [];
  }

  /** Applies a lock request on every member: the caller's key, created if missing. */
  applyLock({ name, lease }) {
    if (!this.lessor.has(lease)) return { ok: false, error: 'lease not found' };
    const key = lockPrefix(name) + lease.toString(16);
    const kv = this.kv.get(key) ?? this.kv.put(key, '', lease);
    return { ok: true, key, rev: kv.createRevision };
  }

  /**
   * Waits until the caller owns the lock. The wait runs on the member that took the
   * request, on its applied state, and outlives a change of leader.
   */
  wait(name, key, rev, done) {
    const ahead = this.kv.range(lockPrefix(name)).filter((kv) => kv.createRevision < rev);
    if (ahead.length > 0) this.rt.log.info('lock waiting', { name, key, rev, ahead: ahead.map((kv) => kv.key) });
    this.waiters.push({ name, key, rev, done });
    this.progress();
  }

  /** Called after every apply. */
  progress() {
    for (const w of [...this.waiters]) {
      const ahead = this.kv.range(lockPrefix(w.name)).filter((kv) => kv.createRevision < w.rev);
      if (ahead.length > 0) continue;
      this.waiters.splice(this.waiters.indexOf(w), 1);
      if (!this.kv.get(w.key)) {
        this.rt.log.info('lock lost', { name: w.name, key: w.key, rev: w.rev });
        w.done({ ok: false, error: 'session expired' });
        continue;
      }
      this.rt.log.info('lock acquired', { name: w.name, key: w.key, rev: w.rev });
      w.done({ ok: true, key: w.key, rev: w.rev });
    }
  }

  list() {
    return this.waiters.map(({ name, key, rev }) => ({ name, key, rev }));
  }
}
