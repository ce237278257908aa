// replication.js — master/replica replication (replication.c). A replica
// connects to its master with PSYNC and always gets a full resync (the
// keyspace and the master's offset), then applies the command stream. The
// replication offset counts the commands of the stream. A replica whose
// master sends nothing for replTimeoutMs considers the link down.

export class Replication {
  /** @param {DDBench.NodeRuntime} rt @param {import('./db.js').Db} db */
  constructor(rt, db) {
    this.rt = rt;
    this.db = db;
    this.replTimeoutMs = Number(rt.config.replTimeoutMs ?? 2000);
    this.replPingPeriodMs = Number(rt.config.replPingPeriodMs ?? 200);
    /** the master's id while this node is a replica, else null */
    this.masterId = null;
    this.replState = 'NONE';
    /** this node's replication offset: the stream it produced (master) or processed (replica) */
    this.offset = 0;
    this.lastInteraction = 0;
    this.replDownSince = 0;
    this.lastPsyncAt = 0;
    this.lastPingAt = 0;
    /** @type {Set<string>} replicas fed by this master */
    this.replicas = new Set();
  }

  // ---- master side -----------------------------------------------------------

  /** Appends commands to the stream and sends them to every replica. */
  propagate(cmds) {
    if (cmds.length === 0 || this.masterId !== null) return;
    this.offset += cmds.length;
    for (const r of this.replicas) this.rt.send(r, 'ReplStream', { offset: this.offset, cmds });
  }

  onPsync(from) {
    if (this.masterId !== null) return;
    this.replicas.add(from);
    this.rt.log.info('replica asks for synchronization', { replica: from, offset: this.offset });
    this.rt.send(from, 'FullResync', { offset: this.offset, data: this.db.snapshot() });
  }

  // ---- replica side ----------------------------------------------------------

  /** REPLICAOF: start replicating from a (new) master. */
  replicationSetMaster(masterId) {
    if (this.replState === 'CONNECTED') this.handleMasterDisconnection();
    this.masterId = masterId;
    this.replicas.clear();
    this.replState = 'CONNECT';
    this.rt.log.info('connecting to master', { master: masterId });
    this.connectWithMaster();
  }

  /** Promotion: stop replicating and become a master of our own stream. */
  replicationUnsetMaster() {
    this.rt.log.info('discarding previous master, now a master', { previous: this.masterId, offset: this.offset });
    this.masterId = null;
    this.replState = 'NONE';
    this.replDownSince = 0;
  }

  connectWithMaster() {
    this.lastPsyncAt = this.rt.now();
    this.rt.send(this.masterId, 'Psync', { offset: this.offset });
  }

  handleMasterDisconnection() {
    this.replState = 'CONNECT';
    this.replDownSince = this.rt.now();
    this.rt.log.warn('master link down', { master: this.masterId });
  }

  onFullResync(from, { offset, data }) {
    if (from !== this.masterId || this.replState !== 'CONNECT') return;
    this.db.load(data);
    this.offset = offset;
    this.replState = 'CONNECTED';
    this.lastInteraction = this.rt.now();
    this.rt.log.info('master link up', { master: from, offset, keys: this.db.size });
  }

  onReplStream(from, { offset, cmds }) {
    if (from !== this.masterId || this.replState !== 'CONNECTED') return;
    for (const c of cmds) {
      if (c.op === 'set') this.db.set(c.key, c.value, c.expireAt);
      else if (c.op === 'del') this.db.delete(c.key);
    }
    this.offset = offset;
    this.lastInteraction = this.rt.now();
  }

  onReplPing(from) {
    if (from === this.masterId && this.replState === 'CONNECTED') this.lastInteraction = this.rt.now();
  }

  /** replicationCron */
  cron() {
    const now = this.rt.now();
    if (this.masterId === null) {
      if (now - this.lastPingAt >= this.replPingPeriodMs) {
        this.lastPingAt = now;
        for (const r of this.replicas) this.rt.send(r, 'ReplPing', {});
      }
      return;
    }
    if (this.replState === 'CONNECTED' && now - this.lastInteraction > this.replTimeoutMs) this.handleMasterDisconnection();
    if (this.replState === 'CONNECT' && now - this.lastPsyncAt > 500) this.connectWithMaster();
  }
}
