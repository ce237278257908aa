// namenode.js — the NameNode, after HDFS's NameNode and FSNamesystem: the
// namespace (files, their replication factor and their blocks) is persisted in
// an fsimage on the NameNode's disk on every change; where the blocks are is
// learnt from the DataNodes (see blockmanager.js). Client RPCs create files,
// allocate blocks with a pipeline of targets, recover a failed pipeline (a new
// generation stamp for the block, then the DataNodes that have it), complete
// files, return block locations and change a file's replication.
//
// High availability, after HDFS's HA NameNodes: one NameNode is active, the
// others are standbys. The active ships every namespace edit to the standbys
// (HDFS's shared edit log), which load them every tailEditsPeriodMs (the
// EditLogTailer), and all of them before becoming active; DataNodes register, heartbeat
// and report their blocks to every NameNode but take commands only from the
// active one. A standby refuses client calls and schedules no replication work;
// TransitionToActive (haadmin -transitionToActive, once the old active is
// fenced) makes it the active one.
//
// A NameNode that starts from a saved fsimage takes imageLoadMs to load it; its
// RPC server answers every call meanwhile with 'still starting' (HDFS's
// RetriableException "NameNode still not started").

import { BlockManager } from './blockmanager.js';
import { IpcClient, responder } from './ipc.js';

const FSIMAGE = 'fsimage';
const CLIENT_CALLS = new Set(['Create', 'AddBlock', 'UpdateBlockForPipeline', 'UpdatePipeline', 'Complete', 'GetBlockLocations', 'SetReplication', 'Fsck']);

export class NameNode {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.ipc = new IpcClient(rt);
    this.defaultReplication = Number(rt.config.replication ?? 3);
    this.replicationIntervalMs = Number(rt.config.replicationIntervalMs ?? 200);
    /** @type {{ files: Record<string, { replication: number, blocks: Array<{ id: number, gs: number }>, complete: boolean }>, nextBlockId: number, genStamp: number, txid: number }} */
    this.ns = { files: {}, nextBlockId: 1000, genStamp: 1, txid: 0 };
    this.haState = rt.id === String(rt.config.activeNameNode ?? 'nn') ? 'active' : 'standby';
    this.peers = rt.nodes.filter((n) => n.startsWith('nn') && n !== rt.id);
    this.tailEditsPeriodMs = Number(rt.config.tailEditsPeriodMs ?? 1000);
    /** How long loading a saved fsimage takes when the NameNode starts. */
    this.imageLoadMs = Number(rt.config.imageLoadMs ?? 0);
    this.started = false;
    /** The newest namespace the active shipped that this standby has not loaded yet. */
    this.journal = null;
    /** @type {Map<number, string>} block id -> file */
    this.blockFile = new Map();
    this.bm = new BlockManager(rt, (id) => {
      const f = this.ns.files[this.blockFile.get(id) ?? ''];
      if (f && !f.complete) return null;
      return f?.replication ?? this.defaultReplication;
    });
    this.bm.postponeBlocksFromFuture = this.haState === 'standby';
  }

  start() {
    // The RPC server is up at once; until the saved image is loaded, every call is answered 'still starting'.
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => this.status());
    const image = this.rt.disk.read(FSIMAGE);
    if (!image) return this.startServices(null);
    this.rt.log.info('loading fsimage', { loadMs: this.imageLoadMs });
    this.rt.setTimer(this.imageLoadMs, () => this.startServices(image));
  }

  /** Loads the saved namespace (if any), then starts the ReplicationMonitor and the EditLogTailer and serves calls. */
  startServices(image) {
    if (image) this.ns = JSON.parse(image);
    this.loadBlocks();
    const monitor = () => {
      this.bm.heartbeatCheck();
      if (this.haState === 'active') this.bm.computeReplicationWork();
      this.rt.setTimer(this.replicationIntervalMs, monitor);
    };
    this.rt.setTimer(this.replicationIntervalMs, monitor);
    const tailer = () => {
      if (this.haState === 'standby') this.tailEdits();
      this.rt.setTimer(this.tailEditsPeriodMs, tailer);
    };
    this.rt.setTimer(this.tailEditsPeriodMs, tailer);
    this.started = true;
    this.rt.log.info('namenode started', { state: this.haState, files: Object.keys(this.ns.files).length, blocks: this.blockFile.size });
  }

  /** Puts every block of the namespace in the blocks map, at its generation stamp. */
  loadBlocks() {
    for (const [path, f] of Object.entries(this.ns.files)) {
      for (const b of f.blocks) {
        this.blockFile.set(b.id, path);
        const known = this.bm.blocksMap.get(b.id);
        if (!known) this.bm.addBlock(b.id, b.gs);
        else if (known.gs !== b.gs) {
          // setGenerationStampAndVerifyReplicas: replicas are counted again once reported at the new stamp.
          known.gs = b.gs;
          known.locations.clear();
        }
      }
    }
  }

  saveNamespace() {
    this.ns.txid++;
    this.rt.disk.write(FSIMAGE, JSON.stringify(this.ns));
    this.rt.disk.sync();
    for (const peer of this.peers) this.ipc.call(peer, 'JournalEdits', { ns: this.ns }, 1000, () => {});
  }

  /** The EditLogTailer: loads the edits shipped since the last tail, then the reports they explain. */
  tailEdits() {
    const ns = this.journal;
    this.journal = null;
    if (ns && ns.txid > this.ns.txid) {
      this.ns = ns;
      this.rt.disk.write(FSIMAGE, JSON.stringify(this.ns));
      this.rt.disk.sync();
      this.loadBlocks();
      this.rt.log.info('loaded edits', { txid: ns.txid });
    }
    this.bm.processQueuedReports();
  }

  /** The standby becomes active (HDFS's startActiveServices). */
  transitionToActive() {
    if (this.haState === 'active') return;
    this.tailEdits();
    this.haState = 'active';
    this.bm.postponeBlocksFromFuture = false;
    this.rt.log.info('transitioned to active', { txid: this.ns.txid });
    // processAllPendingDNMessages: what is still queued is judged as the active NameNode judges it.
    this.bm.processQueuedReports();
    this.bm.markAllStale();
    // processMisReplicatedBlocks: a scan of every block right away.
    this.bm.computeReplicationWork();
  }

  onMessage(msg) {
    if (this.ipc.receive(msg)) return;
    const reply = responder(this.rt, msg);
    const b = msg.body ?? {};
    const from = msg.from;
    // NameNodeRpcServer.checkNNStartup: a RetriableException until the NameNode has started. The shared edit log
    // is not behind this RPC server, so edits shipped meanwhile are kept.
    if (!this.started && msg.type !== 'JournalEdits') return reply({ ok: false, error: 'still starting' });
    if (this.haState === 'standby' && CLIENT_CALLS.has(msg.type)) return reply({ ok: false, error: 'standby' });
    switch (msg.type) {
      // HAServiceProtocol and the shared edits
      case 'TransitionToActive':
        this.transitionToActive();
        return reply({ ok: true });
      case 'JournalEdits':
        if (this.haState === 'standby' && b.ns.txid > (this.journal ?? this.ns).txid) this.journal = b.ns;
        return reply({ ok: true });
      // DatanodeProtocol
      case 'RegisterDatanode':
        this.bm.registerDatanode(from);
        return reply({ ok: true });
      case 'Heartbeat':
        return reply({ ok: true, state: this.haState, commands: this.bm.handleHeartbeat(from, Number(b.replicas ?? 0)) });
      case 'BlockReport':
        return reply(this.bm.processReport(from, b.blocks ?? []) ? { ok: true } : { ok: false, error: 'unregistered' });
      case 'BlockReceived':
        this.bm.blockReceived(from, Number(b.block), Number(b.gs));
        return reply({ ok: true });
      case 'BlockDeleted':
        this.bm.blocksDeleted(from, (b.blocks ?? []).map(Number));
        return reply({ ok: true });
      // ClientProtocol
      case 'Create': {
        const path = String(b.path);
        if (this.ns.files[path]) return reply({ ok: false, error: 'file exists' });
        this.ns.files[path] = { replication: Number(b.replication ?? this.defaultReplication), blocks: [], complete: false };
        this.saveNamespace();
        return reply({ ok: true });
      }
      case 'AddBlock':
        return reply(this.addBlock(String(b.path), Number(b.index ?? -1)));
      case 'UpdateBlockForPipeline':
        return reply(this.updateBlockForPipeline(String(b.path), Number(b.index ?? -1)));
      case 'UpdatePipeline':
        return reply(this.updatePipeline(String(b.path), Number(b.index ?? -1), Number(b.gs), (b.nodes ?? []).map(String)));
      case 'Complete':
        return reply(this.complete(String(b.path)));
      case 'GetBlockLocations': {
        const f = this.ns.files[String(b.path)];
        if (!f) return reply({ ok: false, error: 'file not found' });
        const blocks = f.blocks.map((blk) => ({ id: blk.id, gs: blk.gs, locations: this.liveLocations(blk.id) }));
        return reply({ ok: true, complete: f.complete, replication: f.replication, blocks });
      }
      case 'SetReplication': {
        const f = this.ns.files[String(b.path)];
        if (!f) return reply({ ok: false, error: 'file not found' });
        f.replication = Number(b.replication);
        this.saveNamespace();
        this.rt.log.info('replication changed', { path: String(b.path), replication: f.replication });
        return reply({ ok: true });
      }
      case 'Fsck':
        return reply({ ok: true, ...this.fsck() });
      default:
        return reply({ ok: false, error: `unknown request ${msg.type}` });
    }
  }

  /** Allocates block number `index` of the file (a retried call gets the same block, with fresh targets). */
  addBlock(path, index) {
    const f = this.ns.files[path];
    if (!f) return { ok: false, error: 'file not found' };
    if (f.complete) return { ok: false, error: 'file is complete' };
    const targets = this.bm.chooseTargets(f.replication);
    if (targets.length === 0) return { ok: false, error: 'no datanodes' };
    if (index >= 0 && index < f.blocks.length) return { ok: true, block: f.blocks[index], targets };
    const block = { id: this.ns.nextBlockId++, gs: this.ns.genStamp };
    f.blocks.push(block);
    this.saveNamespace();
    this.blockFile.set(block.id, path);
    this.bm.addBlock(block.id, block.gs);
    this.rt.log.info('block allocated', { path, block: block.id, targets });
    return { ok: true, block, targets };
  }

  /** A new generation stamp for block number `index`, which the client's pipeline recovery moves the surviving replicas to. */
  updateBlockForPipeline(path, index) {
    const f = this.ns.files[path];
    if (!f) return { ok: false, error: 'file not found' };
    if (f.complete || !f.blocks[index]) return { ok: false, error: 'no block under construction' };
    this.ns.genStamp++;
    this.saveNamespace();
    return { ok: true, gs: this.ns.genStamp };
  }

  /** Commits a recovered pipeline: the block takes the new generation stamp, located on `nodes`. */
  updatePipeline(path, index, gs, nodes) {
    const f = this.ns.files[path];
    const block = f?.blocks[index];
    if (!block || f.complete) return { ok: false, error: 'no block under construction' };
    if (!(gs > block.gs && gs <= this.ns.genStamp)) return { ok: false, error: 'bad generation stamp' };
    block.gs = gs;
    this.saveNamespace();
    this.bm.updatePipeline(block.id, gs, nodes);
    this.rt.log.info('pipeline updated', { path, block: block.id, gs, nodes });
    return { ok: true };
  }

  complete(path) {
    const f = this.ns.files[path];
    if (!f) return { ok: false, error: 'file not found' };
    if (f.blocks.some((b) => this.liveLocations(b.id).length === 0)) return { ok: false, error: 'not yet replicated' };
    f.complete = true;
    this.saveNamespace();
    return { ok: true };
  }

  liveLocations(blockId) {
    const b = this.bm.blocksMap.get(blockId);
    return b ? [...b.locations].filter((d) => this.bm.datanodes.get(d)?.alive).sort() : [];
  }

  fsck() {
    const files = {};
    let under = 0;
    let over = 0;
    let missing = 0;
    for (const [path, f] of Object.entries(this.ns.files)) {
      files[path] = f.blocks.map((b) => {
        const n = this.liveLocations(b.id).length;
        if (n === 0) missing++;
        else if (n < f.replication) under++;
        else if (n > f.replication) over++;
        return { id: b.id, replication: f.replication, live: n };
      });
    }
    return { files, underReplicated: under, overReplicated: over, missing, liveNodes: this.bm.liveNodes() };
  }

  status() {
    return { id: this.rt.id, haState: this.haState, namespace: this.ns, ...this.bm.report(), ...this.fsck() };
  }
}
