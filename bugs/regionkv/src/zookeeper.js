// zookeeper.js — the coordination service, after ZooKeeper: znodes with data,
// persistent or ephemeral (owned by a session), and sessions kept alive by
// pings. A session that misses pings for zkSessionTimeoutMs expires and its
// ephemeral znodes are deleted. Parents are implicit: a path's children are the
// next segments of the znodes under it.
//
// This node also stands in for the cluster's shared filesystem (HDFS in a real
// deployment): append-only files of JSON records, used for WALs, recovered
// edits and region store files. As in HDFS, a rename fails when its
// destination exists, and a directory listing gives the files under a path. The hbase:meta table is kept as znodes under
// /hbase/meta, one per region.

export class ZooKeeperServer {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.sessionTimeoutMs = Number(rt.config.zkSessionTimeoutMs ?? 2000);
    /** @type {Map<string, { data: any, ephemeralOwner: string | null }>} */
    this.znodes = new Map();
    /** @type {Map<string, { owner: string, lastPing: number }>} */
    this.sessions = new Map();
    /** @type {Map<string, any[]>} */
    this.files = new Map();
    this.sessionSeq = 0;
  }

  start() {
    this.rt.onMessage((msg) => this.process(msg));
    this.rt.exposeState(() => this.status());
    const tick = () => {
      this.expireSessions();
      this.rt.setTimer(100, tick);
    };
    this.rt.setTimer(100, tick);
    this.rt.log.info('zookeeper started', { sessionTimeoutMs: this.sessionTimeoutMs });
  }

  expireSessions() {
    const now = this.rt.now();
    const late = now - (this.lastTick ?? now) > 3 * 100;
    this.lastTick = now;
    if (late) {
      // This server was stalled itself: pings may be waiting unread, so expire nobody this round.
      for (const s of this.sessions.values()) s.lastPing = Math.max(s.lastPing, now - 100);
      return;
    }
    for (const [sid, s] of this.sessions) {
      if (now - s.lastPing <= this.sessionTimeoutMs) continue;
      this.sessions.delete(sid);
      const removed = [];
      for (const [path, z] of this.znodes) {
        if (z.ephemeralOwner === sid) {
          this.znodes.delete(path);
          removed.push(path);
        }
      }
      this.rt.log.info('session expired', { sid, owner: s.owner, removed });
    }
  }

  children(path) {
    const prefix = path.endsWith('/') ? path : path + '/';
    const names = new Set();
    for (const p of this.znodes.keys()) {
      if (p.startsWith(prefix)) names.add(p.slice(prefix.length).split('/')[0]);
    }
    return [...names].sort().map((name) => ({ name, data: this.znodes.get(prefix + name)?.data ?? null }));
  }

  process(msg) {
    const { from, type } = msg;
    const b = msg.body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: b.reqId ?? null, ...res });
    const path = String(b.path ?? '');
    switch (type) {
      case 'ZkConnect': {
        const sid = `${from}-${++this.sessionSeq}`;
        this.sessions.set(sid, { owner: from, lastPing: this.rt.now() });
        return reply({ ok: true, sid, timeoutMs: this.sessionTimeoutMs });
      }
      case 'ZkPing': {
        const s = this.sessions.get(b.sid);
        if (!s) return reply({ ok: false, error: 'session expired' });
        s.lastPing = this.rt.now();
        return reply({ ok: true });
      }
      case 'ZkCreate': {
        if (this.znodes.has(path)) return reply({ ok: false, error: 'node exists' });
        const owner = b.ephemeral ? b.sid : null;
        if (owner && !this.sessions.has(owner)) return reply({ ok: false, error: 'session expired' });
        this.znodes.set(path, { data: b.data ?? null, ephemeralOwner: owner });
        this.rt.log.info('znode created', { path, from, ephemeral: Boolean(owner) });
        return reply({ ok: true });
      }
      case 'ZkSet': {
        const z = this.znodes.get(path);
        if (z) z.data = b.data ?? null;
        else this.znodes.set(path, { data: b.data ?? null, ephemeralOwner: null });
        return reply({ ok: true });
      }
      case 'ZkGet': {
        const z = this.znodes.get(path);
        return reply({ ok: true, exists: Boolean(z), data: z ? z.data : null, ephemeralOwner: z ? z.ephemeralOwner : null });
      }
      case 'ZkDelete': {
        const existed = this.znodes.delete(path);
        if (existed) this.rt.log.info('znode deleted', { path, from });
        return reply({ ok: true, deleted: existed });
      }
      case 'ZkChildren':
        return reply({ ok: true, children: this.children(path) });
      case 'FsAppend': {
        const f = this.files.get(String(b.file)) ?? [];
        f.push(...(b.records ?? []));
        this.files.set(String(b.file), f);
        return reply({ ok: true, length: f.length });
      }
      case 'FsRead': {
        const f = this.files.get(String(b.file)) ?? [];
        const offset = Number(b.offset ?? 0);
        return reply({ ok: true, records: f.slice(offset), length: f.length });
      }
      case 'FsDelete':
        this.files.delete(String(b.file));
        return reply({ ok: true });
      case 'FsRename': {
        const src = this.files.get(String(b.file));
        if (!src) return reply({ ok: false, error: 'no such file' });
        if (this.files.has(String(b.to))) return reply({ ok: false, error: 'destination exists' });
        this.files.delete(String(b.file));
        this.files.set(String(b.to), src);
        return reply({ ok: true });
      }
      case 'FsList': {
        const prefix = String(b.dir).endsWith('/') ? String(b.dir) : String(b.dir) + '/';
        return reply({ ok: true, files: [...this.files.keys()].filter((f) => f.startsWith(prefix)).sort() });
      }
      default:
        return reply({ ok: false, error: `unknown request ${type}` });
    }
  }

  status() {
    return {
      id: this.rt.id,
      sessions: [...this.sessions].map(([sid, s]) => ({ sid, owner: s.owner })),
      znodes: Object.fromEntries([...this.znodes].map(([p, z]) => [p, { data: z.data, ephemeral: z.ephemeralOwner !== null }])),
      files: Object.fromEntries([...this.files].map(([f, r]) => [f, r.length])),
    };
  }
}
