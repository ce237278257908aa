// zkdatabase.js — after ZooKeeper's ZKDatabase, DataTree and FileTxnSnapLog:
// the in-memory tree of znodes, the transaction log on disk, the snapshot, and
// the committedLog the leader syncs learners from. On load the snapshot is
// restored and every logged transaction after it is replayed; after that the
// tree stays in memory across elections, and fastForwardDataBase applies
// whatever the log holds beyond it. Every snapCount committed transactions the
// tree is snapshotted and the log entries the snapshot covers are purged
// (ZooKeeper's snapshot plus autopurge).

const LOG = 'log';
const SNAPSHOT = 'snapshot';

/** zxid = epoch in the high 32 bits, counter in the low 32 bits. */
export const ZXID_EPOCH = 2 ** 32;
export function makeZxid(epoch, counter) {
  return epoch * ZXID_EPOCH + counter;
}
export function epochOf(zxid) {
  return Math.floor(zxid / ZXID_EPOCH);
}
export function hexZxid(zxid) {
  return '0x' + zxid.toString(16);
}

export class DataTree {
  constructor() {
    /** @type {Map<string, { data: string, version: number, czxid: number, mzxid: number, ephemeralOwner: string | null }>} */
    this.nodes = new Map([['/', { data: '', version: 0, czxid: 0, mzxid: 0, ephemeralOwner: null }]]);
    /** @type {Set<string>} open sessions (ZooKeeper's sessionsWithTimeouts) */
    this.sessions = new Set();
    this.lastProcessedZxid = 0;
  }

  static parent(path) {
    const i = path.lastIndexOf('/');
    return i <= 0 ? '/' : path.slice(0, i);
  }

  /** Applies one transaction; every replica gets the same result for the same txn. */
  processTxn(txn) {
    this.lastProcessedZxid = txn.zxid;
    const node = this.nodes.get(txn.path);
    switch (txn.type) {
      case 'create': {
        if (node) return { ok: false, error: 'NODEEXISTS' };
        const parent = this.nodes.get(DataTree.parent(txn.path));
        if (!parent) return { ok: false, error: 'NONODE' };
        if (parent.ephemeralOwner) return { ok: false, error: 'NOCHILDRENFOREPHEMERALS' };
        const owner = txn.ephemeral ? txn.session : null;
        this.nodes.set(txn.path, { data: txn.data, version: 0, czxid: txn.zxid, mzxid: txn.zxid, ephemeralOwner: owner });
        return { ok: true, path: txn.path };
      }
      case 'setData':
        if (!node) return { ok: false, error: 'NONODE' };
        if (txn.version !== -1 && txn.version !== node.version) return { ok: false, error: 'BADVERSION' };
        node.data = txn.data;
        node.version += 1;
        node.mzxid = txn.zxid;
        return { ok: true, stat: stat(node) };
      case 'delete':
        if (!node || txn.path === '/') return { ok: false, error: 'NONODE' };
        if (txn.version !== -1 && txn.version !== node.version) return { ok: false, error: 'BADVERSION' };
        for (const p of this.nodes.keys()) if (DataTree.parent(p) === txn.path && p !== '/') return { ok: false, error: 'NOTEMPTY' };
        this.nodes.delete(txn.path);
        return { ok: true };
      case 'createSession':
        this.sessions.add(txn.session);
        return { ok: true, session: txn.session };
      case 'closeSession':
        // Like DataTree.killSession: the session's ephemeral znodes go with it.
        if (!this.sessions.delete(txn.session)) return { ok: false, error: 'SESSIONEXPIRED' };
        for (const [p, n] of this.nodes) if (n.ephemeralOwner === txn.session) this.nodes.delete(p);
        return { ok: true };
      case 'error':
        // A request the leader's PrepRequestProcessor rejected: it takes a zxid and changes nothing.
        return { ok: false, error: txn.error };
      default:
        return { ok: false, error: `unknown txn ${txn.type}` };
    }
  }

  getData(path) {
    const node = this.nodes.get(path);
    return node ? { found: true, data: node.data, stat: stat(node) } : { found: false, data: null, stat: null };
  }

  /** Like ZooKeeper's digest: a hash over every znode's path, data and stat, and the open sessions. */
  digest() {
    let h = 0x811c9dc5;
    for (const p of [...this.nodes.keys()].sort()) {
      const n = this.nodes.get(p);
      h = fnv(h, `|${p}=${n.data}@${n.version}/${n.czxid}/${n.mzxid}/${n.ephemeralOwner ?? ''}`);
    }
    for (const id of [...this.sessions].sort()) h = fnv(h, `#${id}`);
    return h.toString(16).padStart(8, '0');
  }

  serialize() {
    return { zxid: this.lastProcessedZxid, nodes: Object.fromEntries(this.nodes), sessions: [...this.sessions] };
  }

  static deserialize(snap) {
    const t = new DataTree();
    t.nodes = new Map(Object.entries(snap.nodes).map(([p, n]) => [p, { ...n }]));
    t.sessions = new Set(snap.sessions);
    t.lastProcessedZxid = snap.zxid;
    return t;
  }
}

function fnv(h, s) {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function stat(node) {
  return { version: node.version, czxid: hexZxid(node.czxid), mzxid: hexZxid(node.mzxid), ephemeralOwner: node.ephemeralOwner };
}

export class ZKDatabase {
  /**
   * @param {DDBench.Disk} disk the node's disk (rt.disk)
   * @param {{ snapCount: number, log: any }} opts log: the node's logger (rt.log)
   */
  constructor(disk, { snapCount, log }) {
    this.disk = disk;
    this.snapCount = snapCount;
    this.log = log;
    this.tree = new DataTree();
    /** @type {Array<{ zxid: number, type: string, path?: string, data?: string, version?: number, ephemeral?: boolean, session?: string, origin?: any }>} */
    this.committedLog = [];
    this.snapshotZxid = 0;
    this.txnsSinceSnapshot = 0;
  }

  get minCommittedLog() {
    return this.committedLog.length ? this.committedLog[0].zxid : this.tree.lastProcessedZxid;
  }

  get maxCommittedLog() {
    return this.committedLog.length ? this.committedLog[this.committedLog.length - 1].zxid : this.tree.lastProcessedZxid;
  }

  /** Restores the snapshot and replays the log after it. Returns the last zxid. */
  loadDataBase() {
    const snap = this.disk.read(SNAPSHOT);
    this.tree = snap ? DataTree.deserialize(JSON.parse(snap)) : new DataTree();
    this.snapshotZxid = this.tree.lastProcessedZxid;
    this.committedLog = [];
    for (const txn of this.readLog()) {
      if (txn.zxid <= this.snapshotZxid) continue;
      this.tree.processTxn(txn);
      this.committedLog.push(txn);
    }
    this.txnsSinceSnapshot = this.committedLog.length;
    return this.tree.lastProcessedZxid;
  }

  /** Applies the logged txns the tree does not hold yet (ZKDatabase.fastForwardDataBase). Returns the last zxid. */
  fastForwardDataBase() {
    for (const txn of this.readLog()) {
      if (txn.zxid <= this.tree.lastProcessedZxid) continue;
      this.tree.processTxn(txn);
      this.committedLog.push(txn);
      this.txnsSinceSnapshot += 1;
    }
    return this.tree.lastProcessedZxid;
  }

  readLog() {
    const out = [];
    for (const line of (this.disk.read(LOG) ?? '').split('\n')) {
      if (!line) continue;
      try {
        out.push(JSON.parse(line));
      } catch {
        break; // a torn tail record
      }
    }
    return out;
  }

  /** Appends transactions to the txn log; `commit()` makes them durable. */
  append(txns) {
    if (txns.length === 0) return;
    this.disk.append(LOG, txns.map((t) => JSON.stringify(t) + '\n').join(''));
  }

  commit() {
    this.disk.sync();
  }

  /** The last zxid in the txn log, 0 when the log holds none (FileTxnLog.getLastLoggedZxid). */
  lastLoggedZxid() {
    const log = this.readLog();
    return log.length ? log[log.length - 1].zxid : 0;
  }

  /** Records a transaction just applied to the tree; every snapCount of them the tree is snapshotted. */
  addCommittedProposal(txn) {
    this.committedLog.push(txn);
    this.txnsSinceSnapshot += 1;
    if (this.txnsSinceSnapshot >= this.snapCount) this.takeSnapshot();
  }

  /** Saves the tree as the snapshot and purges the logged txns it covers; txns logged but not yet applied stay. */
  takeSnapshot() {
    const snap = this.tree.serialize();
    const kept = this.readLog().filter((t) => t.zxid > snap.zxid);
    this.disk.write(SNAPSHOT, JSON.stringify(snap));
    this.disk.write(LOG, kept.map((t) => JSON.stringify(t) + '\n').join(''));
    this.disk.sync();
    this.snapshotZxid = snap.zxid;
    this.committedLog = this.committedLog.filter((t) => t.zxid > snap.zxid);
    this.txnsSinceSnapshot = 0;
    this.log.info('snapshot', { zxid: hexZxid(snap.zxid), znodes: this.tree.nodes.size - 1, keptInLog: kept.length });
  }

  /** Drops every logged txn after zxid, then reloads the tree. */
  truncateLog(zxid) {
    const kept = this.readLog().filter((t) => t.zxid <= zxid);
    this.disk.write(LOG, kept.map((t) => JSON.stringify(t) + '\n').join(''));
    this.disk.sync();
    return this.loadDataBase();
  }

  /** Replaces the tree with the leader's snapshot, in memory only (ZKDatabase.deserializeSnapshot). Returns its zxid. */
  deserializeSnapshot(snap) {
    this.tree = DataTree.deserialize(snap);
    this.committedLog = [];
    this.txnsSinceSnapshot = 0;
    return this.tree.lastProcessedZxid;
  }
}
