// replication.js — replication to the peer cluster, after HBase's
// ReplicationSourceManager. Each region server has a queue znode per peer under
// /hbase/replication/rs/<server>/ holding the WAL it ships and the position
// shipped so far; a ReplicationSource reads the WAL from that position, sends
// the edits to the peer's sink, and records the new position. When a server
// dies, a live server claims its queues (NodeFailoverWorker): it locks the dead
// server's replication znode, copies the queues under its own, deletes the
// originals and the lock, and runs a recovered source for each until the dead
// WAL is fully shipped.

import { hostOf } from './rpc.js';

const RS_ROOT = '/hbase/replication/rs';

export class ReplicationSourceManager {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {import('./rpc.js').RpcClient} rpc
   * @param {import('./zkwatcher.js').ZKWatcher} zk
   */
  constructor(rt, rpc, zk, serverName, wal) {
    this.rt = rt;
    this.rpc = rpc;
    this.zk = zk;
    this.serverName = serverName;
    this.wal = wal;
    this.peer = String(rt.config.replicationPeer ?? 'peer');
    this.shipMs = Number(rt.config.replicationShipMs ?? 100);
    this.claimMs = Number(rt.config.replicationClaimMs ?? 300);
    /** @type {Array<{ queueId: string, path: string, wal: string, pos: number, recovered: boolean }>} */
    this.sources = [];
    this.stopped = false;
    this.claiming = false;
  }

  start() {
    const queueId = this.peer;
    const path = `${RS_ROOT}/${this.serverName}/${queueId}`;
    this.zk.opRetry('ZkSet', { path, data: { wal: this.wal, pos: 0 } }, () => {
      this.sources.push({ queueId, path, wal: this.wal, pos: 0, recovered: false });
      this.rt.setTimer(this.shipMs, () => this.shipLoop());
      this.rt.setTimer(this.claimMs, () => this.claimLoop());
    });
  }

  stop() {
    this.stopped = true;
  }

  // ---- ReplicationSource ---------------------------------------------------

  shipLoop() {
    if (this.stopped) return;
    const sources = [...this.sources];
    const next = (i) => {
      if (this.stopped) return;
      if (i >= sources.length) return this.rt.setTimer(this.shipMs, () => this.shipLoop());
      this.ship(sources[i], () => next(i + 1));
    };
    next(0);
  }

  ship(src, cb) {
    this.zk.op('FsRead', { file: src.wal, offset: src.pos }, (res) => {
      if (!res.ok) return cb();
      if (res.records.length === 0) {
        if (!src.recovered) return cb();
        // The dead server's WAL will not grow: the recovered queue is done.
        return this.zk.op('ZkDelete', { path: src.path }, (d) => {
          if (d.ok) {
            this.sources = this.sources.filter((s) => s !== src);
            this.rt.log.info('recovered queue finished', { queue: src.queueId, shipped: src.pos });
          }
          cb();
        });
      }
      const entries = res.records.map((e) => ({ row: e.row, value: e.value, seq: e.seq, region: e.region }));
      this.rpc.call(this.peer, 'ReplicateWALEntry', { entries, source: this.serverName, queue: src.queueId }, 1000, (r) => {
        if (!r.ok) return cb();
        const pos = src.pos + entries.length;
        this.zk.op('ZkSet', { path: src.path, data: { wal: src.wal, pos } }, (s) => {
          if (s.ok) src.pos = pos;
          cb();
        });
      });
    });
  }

  // ---- NodeFailoverWorker --------------------------------------------------

  claimLoop() {
    if (this.stopped) return;
    const again = () => this.rt.setTimer(this.claimMs, () => this.claimLoop());
    this.zk.op('ZkChildren', { path: RS_ROOT }, (queues) => {
      this.zk.op('ZkChildren', { path: '/hbase/rs' }, (live) => {
        if (!queues.ok || !live.ok || this.stopped) return again();
        const liveServers = new Set(live.children.map((c) => c.name));
        const dead = queues.children.map((c) => c.name).filter((s) => s !== this.serverName && !liveServers.has(s));
        const next = (i) => {
          if (i >= dead.length || this.stopped) return again();
          this.transferQueues(dead[i], liveServers, () => next(i + 1));
        };
        next(0);
      });
    });
  }

  transferQueues(deadServer, liveServers, cb) {
    const root = `${RS_ROOT}/${deadServer}`;
    const lock = `${root}/lock`;
    this.zk.op('ZkCreate', { path: lock, data: this.serverName }, (res) => {
      if (this.stopped) return;
      if (!res.ok) {
        if (res.error !== 'node exists') return cb();
        return this.zk.op('ZkGet', { path: lock }, (owner) => {
          if (!owner.ok || !owner.exists || liveServers.has(owner.data)) return cb();
          this.rt.log.info('removing lock of dead claimer', { server: deadServer, owner: owner.data });
          this.zk.op('ZkDelete', { path: lock }, () => cb());
        });
      }
      this.rt.log.info('locked queues of dead server', { server: deadServer });
      this.zk.opRetry('ZkChildren', { path: root }, (list) => {
        const queues = list.children.filter((c) => c.name !== 'lock' && c.data);
        const copies = queues.map((q) => ({ from: `${root}/${q.name}`, queueId: `${q.name}-${deadServer}`, data: q.data }));
        const copy = (i) => {
          if (this.stopped) return;
          if (i < copies.length) {
            const c = copies[i];
            return this.zk.opRetry('ZkSet', { path: `${RS_ROOT}/${this.serverName}/${c.queueId}`, data: c.data }, () => copy(i + 1));
          }
          const remove = (j) => {
            if (this.stopped) return;
            if (j < copies.length) return this.zk.opRetry('ZkDelete', { path: copies[j].from }, () => remove(j + 1));
            this.zk.opRetry('ZkDelete', { path: lock }, () => {
              for (const c of copies) {
                const path = `${RS_ROOT}/${this.serverName}/${c.queueId}`;
                this.sources.push({ queueId: c.queueId, path, wal: c.data.wal, pos: c.data.pos, recovered: true });
              }
              this.rt.log.info('claimed queues of dead server', { server: deadServer, queues: copies.map((c) => c.queueId), from: hostOf(deadServer) });
              cb();
            });
          };
          remove(0);
        };
        copy(0);
      });
    });
  }

  list() {
    return this.sources.map((s) => ({ queue: s.queueId, wal: s.wal, pos: s.pos, recovered: s.recovered }));
  }
}
