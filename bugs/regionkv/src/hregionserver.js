// hregionserver.js — a region server, after HBase's HRegionServer. It registers
// an ephemeral znode under /hbase/rs (its "server name" is host,startcode),
// opens the regions the master assigns to it, and serves Put and Get for the
// rows in them. Every edit is appended to the server's WAL on the shared
// filesystem before it is applied to the region's memstore and acknowledged.
// Opening a region loads its store file and replays the recovered edits that
// WAL splits left for it, then records the region's location in hbase:meta.
// A region server also splits dead servers' WALs when the master asks
// (SplitWAL, see walsplitter.js).
// Regions are split on request: a region-in-transition znode records the split,
// the parent's rows go to two daughters, meta marks the parent offline and split,
// and the master is told.

import { RpcClient, replier } from './rpc.js';
import { ZKWatcher } from './zkwatcher.js';
import { ReplicationSourceManager } from './replication.js';
import { WALSplitter, recoveredDir } from './walsplitter.js';

function inRange(info, row) {
  return row >= info.start && (info.end === '' || row < info.end);
}

export class HRegionServer {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.rpc = new RpcClient(rt);
    this.incarnation = 0;
    this.reset();
  }

  /** A new server instance: new start code, WAL and ZooKeeper session, no regions. */
  reset() {
    const rt = this.rt;
    const inc = ++this.incarnation;
    this.zk = new ZKWatcher(rt, this.rpc, () => this.abort('zookeeper session expired', inc));
    this.serverName = `${rt.id},${rt.now()}`;
    this.wal = `/hbase/WALs/${this.serverName}`;
    this.running = false;
    this.aborted = false;
    /** @type {Map<string, { info: any, memstore: Map<string, { value: string, seq: number }>, seq: number, closing: boolean, pending: number }>} */
    this.online = new Map();
    this.replication = new ReplicationSourceManager(rt, this.rpc, this.zk, this.serverName, this.wal);
    this.splitter = new WALSplitter(rt, this.zk, this.serverName);
  }

  start() {
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => this.status());
    this.zk.connect(() => this.reportForDuty());
  }

  reportForDuty() {
    const inc = this.incarnation;
    this.zk.opRetry('ZkCreate', { path: `/hbase/rs/${this.serverName}`, data: this.rt.id, ephemeral: true }, (res) => {
      if (inc !== this.incarnation) return;
      // 'node exists': an earlier attempt whose reply was lost created it (the name is ours alone).
      if (!res.ok && res.error !== 'node exists') return this.abort(`cannot register: ${res.error}`, inc);
      this.running = true;
      this.rt.log.info('region server running', { server: this.serverName });
      this.replication.start();
    });
  }

  /** Drops every region and comes back as a new server instance (restart on ZooKeeper expiry). */
  abort(why, inc) {
    if (this.aborted || inc !== this.incarnation) return;
    this.aborted = true;
    this.running = false;
    this.replication.stop();
    this.splitter.abort();
    this.online.clear();
    this.rt.log.error('region server aborting', { why, server: this.serverName });
    this.rt.setTimer(200, () => {
      this.reset();
      this.rt.log.info('region server restarting', { server: this.serverName });
      this.zk.connect(() => this.reportForDuty());
    });
  }

  onMessage(msg) {
    if (this.rpc.onReply(msg) || this.aborted) return;
    const reply = replier(this.rt, msg);
    const b = msg.body ?? {};
    if (!this.running && msg.type !== 'Status') return reply({ ok: false, error: 'ServerNotRunningYetException' });
    switch (msg.type) {
      case 'Status':
        return reply({ ok: true, server: this.serverName, running: this.running, regions: this.regionList() });
      case 'OpenRegion':
        return this.openRegion(b.region, reply);
      case 'Put':
        return this.put(String(b.row), String(b.value), reply);
      case 'Get': {
        const r = this.regionFor(String(b.row));
        if (!r) return reply({ ok: false, error: 'NotServingRegionException' });
        const cell = r.memstore.get(String(b.row));
        return reply({ ok: true, region: r.info.name, found: Boolean(cell), value: cell ? cell.value : null });
      }
      case 'SplitWAL': {
        const inc = this.incarnation;
        // An aborting server does not answer: the master gives the WAL to another worker.
        return this.splitter.split(String(b.wal), (ok) => inc === this.incarnation && !this.aborted && reply({ ok }));
      }
      case 'SplitRegion':
        return this.splitRegion(String(b.region), b.splitRow ? String(b.splitRow) : null, reply);
      default:
        return reply({ ok: false, error: `unknown request ${msg.type}` });
    }
  }

  regionFor(row) {
    for (const r of this.online.values()) if (!r.closing && inRange(r.info, row)) return r;
    return null;
  }

  // ---- open ----------------------------------------------------------------

  openRegion(info, reply) {
    if (this.online.has(info.name)) return reply({ ok: true });
    const inc = this.incarnation;
    const region = { info: { ...info, server: this.serverName }, memstore: new Map(), seq: 0, closing: true, pending: 0 };
    const apply = (edits) => {
      for (const e of edits) {
        const cur = region.memstore.get(e.row);
        if (!cur || e.seq >= cur.seq) region.memstore.set(e.row, { value: e.value, seq: e.seq });
        region.seq = Math.max(region.seq, e.seq);
      }
    };
    const storeFile = `/hbase/data/${info.name}`;
    this.zk.opRetry('FsRead', { file: storeFile, offset: 0 }, (data) => {
      apply(data.records);
      this.zk.opRetry('FsList', { dir: recoveredDir(info.name) }, (ls) => {
        // Temporary files belong to splits still running (or abandoned); only final files are replayed.
        const files = (ls.files ?? []).filter((f) => !f.endsWith('.temp'));
        /** @type {any[]} */
        const replayed = [];
        const replay = (i) => {
          if (i < files.length) {
            return this.zk.opRetry('FsRead', { file: files[i], offset: 0 }, (rec) => {
              apply(rec.records);
              replayed.push(...rec.records);
              replay(i + 1);
            });
          }
          // The replayed edits go into the store file before the recovered edits are removed.
          const persist = (next) => {
            const remove = (j) => (j < files.length ? this.zk.opRetry('FsDelete', { file: files[j] }, () => remove(j + 1)) : next());
            if (replayed.length === 0) return remove(0);
            this.zk.opRetry('FsAppend', { file: storeFile, records: replayed }, () => remove(0));
          };
          persist(() => {
            this.zk.opRetry('ZkSet', { path: `/hbase/meta/${info.name}`, data: region.info }, () => {
              if (inc !== this.incarnation) return;
              region.closing = false;
              this.online.set(info.name, region);
              this.rt.log.info('opened region', { region: info.name, start: info.start, end: info.end, rows: region.memstore.size, replayed: replayed.length, files: files.length });
              reply({ ok: true });
            });
          });
        };
        replay(0);
      });
    });
  }

  // ---- writes --------------------------------------------------------------

  put(row, value, reply) {
    const r = this.regionFor(row);
    if (!r) return reply({ ok: false, error: 'NotServingRegionException' });
    const seq = ++r.seq;
    r.pending++;
    this.zk.op('FsAppend', { file: this.wal, records: [{ region: r.info.name, row, value, seq }] }, (res) => {
      r.pending--;
      if (!res.ok) return reply({ ok: false, error: 'wal append failed' });
      const cur = r.memstore.get(row);
      if (!cur || seq >= cur.seq) r.memstore.set(row, { value, seq });
      reply({ ok: true, region: r.info.name, seq });
    });
  }

  // ---- split ---------------------------------------------------------------

  splitRegion(name, splitRow, reply) {
    const parent = this.online.get(name);
    if (!parent || parent.closing) return reply({ ok: false, error: 'NotServingRegionException' });
    const rows = [...parent.memstore.keys()].sort();
    const mid = splitRow ?? rows[Math.floor(rows.length / 2)];
    if (!mid || mid <= parent.info.start || !inRange(parent.info, mid)) return reply({ ok: false, error: 'no split point' });
    parent.closing = true;
    const inc = this.incarnation;
    const waitFlushed = () => {
      if (parent.pending > 0) return this.rt.setTimer(5, waitFlushed);
      const id = this.rt.now();
      const p = parent.info;
      const a = { name: `${p.table},${p.start},${id}`, table: p.table, start: p.start, end: mid, offline: false, split: false, server: this.serverName };
      const bInfo = { name: `${p.table},${mid},${id}`, table: p.table, start: mid, end: p.end, offline: false, split: false, server: this.serverName };
      const cells = (d) => [...parent.memstore].filter(([row]) => inRange(d, row)).map(([row, c]) => ({ row, value: c.value, seq: c.seq }));
      const parentDone = { ...p, offline: true, split: true, daughters: [a.name, bInfo.name] };
      const rit = { state: 'SPLITTING', server: this.serverName, parent: p, daughters: [a, bInfo] };
      this.zk.opRetry('ZkSet', { path: `/hbase/region-in-transition/${p.name}`, data: rit }, () => {
        this.zk.opRetry('FsAppend', { file: `/hbase/data/${a.name}`, records: cells(a) }, () => {
          this.zk.opRetry('FsAppend', { file: `/hbase/data/${bInfo.name}`, records: cells(bInfo) }, () => {
            this.zk.opRetry('ZkSet', { path: `/hbase/meta/${p.name}`, data: parentDone }, () => {
              this.zk.opRetry('ZkSet', { path: `/hbase/meta/${a.name}`, data: a }, () => {
                this.zk.opRetry('ZkSet', { path: `/hbase/meta/${bInfo.name}`, data: bInfo }, () => {
                  if (inc !== this.incarnation) return;
                  this.online.delete(name);
                  for (const d of [a, bInfo]) {
                    const memstore = new Map(cells(d).map((c) => [c.row, { value: c.value, seq: c.seq }]));
                    this.online.set(d.name, { info: d, memstore, seq: parent.seq, closing: false, pending: 0 });
                  }
                  this.rt.log.info('region split', { parent: name, daughters: [a.name, bInfo.name], splitRow: mid });
                  this.reportSplit(parentDone, [a, bInfo]);
                  reply({ ok: true, daughters: [a.name, bInfo.name] });
                });
              });
            });
          });
        });
      });
    };
    waitFlushed();
  }

  reportSplit(parent, daughters, attempt = 0) {
    this.zk.opRetry('ZkGet', { path: '/hbase/master' }, (m) => {
      const send = (cb) => (m.exists ? this.rpc.call(m.data, 'ReportRegionStateTransition', { code: 'SPLIT', parent, daughters, server: this.serverName }, 1000, cb) : cb({ ok: false }));
      send((res) => {
        if (!res.ok && attempt < 20 && this.running) this.rt.setTimer(200, () => this.reportSplit(parent, daughters, attempt + 1));
      });
    });
  }

  // ---- state ---------------------------------------------------------------

  regionList() {
    return [...this.online.values()].map((r) => ({ name: r.info.name, start: r.info.start, end: r.info.end, rows: r.memstore.size }));
  }

  status() {
    return {
      id: this.rt.id,
      server: this.serverName,
      running: this.running,
      regions: this.regionList(),
      replication: this.replication.list(),
    };
  }
}
