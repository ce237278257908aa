// datanode.js — a DataNode, after HDFS's DataNode, BPOfferService,
// BPServiceActor and DataXceiver. Replicas live on the node's disk (FsDataset).
// One service actor per NameNode heartbeats it every heartbeatMs; the commands
// that come back (transfer a replica, delete replicas) are executed when that
// NameNode says it is the active one, and a request to register from any of
// them. After (re)registering with a NameNode the actor sends it a full block
// report, and again every blockReportIntervalMs. Received and deleted replicas
// are reported one by one to every NameNode. Clients write a block through a
// pipeline of DataNodes: each stores the replica, forwards it downstream and
// acknowledges once the rest of the pipeline has. When a write's pipeline fails,
// the client recovers it the same way: each DataNode left in the pipeline moves
// its replica to the block's new generation stamp (recoverClose).

import { IpcClient, responder } from './ipc.js';

const DATASET = 'replicas';

export class DataNode {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.ipc = new IpcClient(rt);
    this.heartbeatMs = Number(rt.config.heartbeatMs ?? 100);
    this.blockReportIntervalMs = Number(rt.config.blockReportIntervalMs ?? 600000);
    /** @type {Record<string, { gs: number, data: string }>} */
    this.replicas = {};
    /** @type {Record<string, { registered: boolean, registering: boolean, lastBlockReport: number }>} BPServiceActor by NameNode */
    this.actors = Object.fromEntries(rt.nodes.filter((n) => n.startsWith('nn')).map((nn) => [nn, { registered: false, registering: false, lastBlockReport: 0 }]));
  }

  /** Sends an incremental report to every NameNode. */
  notifyNamenodes(type, body) {
    for (const nn of Object.keys(this.actors)) this.ipc.call(nn, type, body, 1000, () => {});
  }

  start() {
    this.replicas = JSON.parse(this.rt.disk.read(DATASET) ?? '{}');
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => this.status());
    this.rt.log.info('datanode started', { replicas: Object.keys(this.replicas).length });
    for (const nn of Object.keys(this.actors)) this.register(nn);
    const beat = () => {
      this.offerService();
      this.rt.setTimer(this.heartbeatMs, beat);
    };
    this.rt.setTimer(this.heartbeatMs, beat);
  }

  // ---- FsDataset -----------------------------------------------------------

  persist() {
    this.rt.disk.write(DATASET, JSON.stringify(this.replicas));
    this.rt.disk.sync();
  }

  storeReplica(id, gs, data) {
    const cur = this.replicas[id];
    if (cur && cur.gs > gs) return false;
    this.replicas[id] = { gs, data };
    this.persist();
    this.notifyNamenodes('BlockReceived', { block: id, gs });
    return true;
  }

  /**
   * A replica the client's block (id, generation stamp) refers to can move to newGs;
   * one that already has a newer generation stamp belongs to a later recovery.
   */
  recoverCheck(block, newGs) {
    const r = this.replicas[block.id];
    if (!r || r.gs < block.gs || r.gs > newGs) return null;
    return r;
  }

  bumpReplicaGs(id, r, newGs) {
    r.gs = newGs;
    this.persist();
    this.rt.log.info('replica recovered', { block: id, gs: newGs });
    this.notifyNamenodes('BlockReceived', { block: id, gs: newGs });
  }

  // ---- BPServiceActor ------------------------------------------------------

  register(nn) {
    const a = this.actors[nn];
    if (a.registering) return;
    a.registering = true;
    this.ipc.call(nn, 'RegisterDatanode', {}, 1000, (res) => {
      a.registering = false;
      if (!res.ok) return;
      a.registered = true;
      this.rt.log.info('registered with namenode', { nn });
      this.blockReport(nn);
    });
  }

  blockReport(nn) {
    const a = this.actors[nn];
    a.lastBlockReport = this.rt.now();
    const blocks = Object.entries(this.replicas).map(([id, r]) => ({ id: Number(id), gs: r.gs }));
    this.ipc.call(nn, 'BlockReport', { blocks }, 5000, (res) => {
      if (res.error !== 'unregistered') return;
      // The NameNode does not know this node (any more): register again, which reports again.
      a.registered = false;
      this.register(nn);
    });
  }

  offerService() {
    for (const [nn, a] of Object.entries(this.actors)) {
      if (!a.registered) {
        this.register(nn);
        continue;
      }
      this.ipc.call(nn, 'Heartbeat', { replicas: Object.keys(this.replicas).length }, 1000, (res) => {
        if (!res.ok) return;
        for (const cmd of res.commands ?? []) {
          if (cmd.type === 'register') this.reregister(nn);
          else if (res.state === 'active') this.processCommand(cmd);
        }
      });
      if (this.rt.now() - a.lastBlockReport >= this.blockReportIntervalMs) this.blockReport(nn);
    }
  }

  reregister(nn) {
    this.actors[nn].registered = false;
    this.rt.log.info('namenode asked to re-register', { nn });
    this.register(nn);
  }

  processCommand(cmd) {
    switch (cmd.type) {
      case 'transfer': {
        const r = this.replicas[cmd.block];
        if (!r) return;
        for (const target of cmd.targets) {
          this.ipc.call(target, 'TransferBlock', { block: cmd.block, gs: r.gs, data: r.data }, 2000, () => {});
        }
        this.rt.log.info('transferring block', { block: cmd.block, targets: cmd.targets });
        return;
      }
      case 'invalidate': {
        for (const id of cmd.blocks) delete this.replicas[id];
        this.persist();
        this.rt.log.info('deleted replicas', { blocks: cmd.blocks });
        this.notifyNamenodes('BlockDeleted', { blocks: cmd.blocks });
        return;
      }
    }
  }

  // ---- DataXceiver ---------------------------------------------------------

  onMessage(msg) {
    if (this.ipc.receive(msg)) return;
    const reply = responder(this.rt, msg);
    const b = msg.body ?? {};
    switch (msg.type) {
      case 'WriteBlock': {
        const { block, data } = b;
        this.storeReplica(block.id, block.gs, String(data));
        const pipeline = /** @type {string[]} */ (b.pipeline ?? []);
        if (pipeline.length === 0) return reply({ ok: true, acks: [this.rt.id] });
        const [next, ...rest] = pipeline;
        return this.ipc.call(next, 'WriteBlock', { block, data, pipeline: rest }, 6000, (down) => {
          reply({ ok: true, acks: [this.rt.id, ...(down.ok ? down.acks : [])] });
        });
      }
      case 'RecoverBlock': {
        const { block } = b;
        const newGs = Number(b.newGs);
        const r = this.recoverCheck(block, newGs);
        if (!r) return reply({ ok: false, error: 'replica not recoverable', gs: this.replicas[block.id]?.gs ?? null });
        this.bumpReplicaGs(block.id, r, newGs);
        const pipeline = /** @type {string[]} */ (b.pipeline ?? []);
        if (pipeline.length === 0) return reply({ ok: true, acks: [this.rt.id] });
        const [next, ...rest] = pipeline;
        return this.ipc.call(next, 'RecoverBlock', { block, newGs, pipeline: rest }, 6000, (down) => {
          reply({ ok: true, acks: [this.rt.id, ...(down.ok ? down.acks : [])] });
        });
      }
      case 'TransferBlock':
        this.storeReplica(Number(b.block), Number(b.gs), String(b.data));
        return reply({ ok: true });
      case 'ReadBlock': {
        const r = this.replicas[b.block];
        return reply(r ? { ok: true, gs: r.gs, data: r.data } : { ok: false, error: 'replica not found' });
      }
      case 'Status':
        return reply({ ok: true, ...this.status() });
      default:
        return reply({ ok: false, error: `unknown request ${msg.type}` });
    }
  }

  status() {
    return {
      id: this.rt.id,
      registered: Object.keys(this.actors).filter((nn) => this.actors[nn].registered),
      replicas: Object.fromEntries(Object.entries(this.replicas).map(([id, r]) => [id, r.gs])),
    };
  }
}
