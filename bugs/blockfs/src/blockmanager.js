// blockmanager.js — the NameNode's view of blocks and DataNodes, after HDFS's
// BlockManager, DatanodeManager and HeartbeatManager. The blocks map (which
// DataNodes hold which block) lives only in memory and is rebuilt from block
// reports. A DataNode registers, heartbeats every heartbeatMs and sends a full
// block report after registering (and every blockReportIntervalMs); a node
// silent for deadNodeMs is declared dead and its replicas are forgotten. The
// ReplicationMonitor schedules copies of under-replicated blocks and deletions
// of excess replicas; a heartbeat reply carries each node's pending commands.
// Blocks of files still being written are left to their writer: a pipeline
// recovery gives such a block a new generation stamp, and a replica reported
// with an older one is corrupt and no longer counts.
//
// After the NameNode starts, and again when a standby NameNode becomes active,
// a node's block contents are "stale" until it has both heartbeated and sent a
// block report since: excess replicas are not deleted while any of a block's
// holders is stale, because the NameNode may not know yet what that holder
// really has. Of a block's replicas, the ones on the fullest DataNodes (most
// replicas, by their heartbeats) are deleted first.

export class BlockManager {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {(blockId: number) => number | null} expectedReplication null while the block's file is being written
   */
  constructor(rt, expectedReplication) {
    this.rt = rt;
    this.expectedReplication = expectedReplication;
    this.deadNodeMs = Number(rt.config.deadNodeMs ?? 1000);
    /** How late a heartbeat scan may come before it is taken for a stall of this NameNode itself. */
    this.heartbeatRecheckMs = this.deadNodeMs / 2;
    /** When the last heartbeat scan ran (HeartbeatManager's stopwatch). */
    this.lastHeartbeatCheck = rt.now();
    this.pendingTimeoutMs = Number(rt.config.pendingReplicationTimeoutMs ?? 2000);
    /** @type {Map<string, any>} DatanodeDescriptor by node id */
    this.datanodes = new Map();
    /** @type {Map<number, { gs: number, locations: Set<string>, corrupt: Set<string> }>} */
    this.blocksMap = new Map();
    /** @type {Map<number, { targets: string[], at: number }>} */
    this.pending = new Map();
    this.postponed = new Set();
    /** A standby postpones reports its edits cannot explain yet; the NameNode sets this with its HA state. */
    this.postponeBlocksFromFuture = false;
    /** @type {Array<{ dn: string, block: number, gs: number }>} PendingDataNodeMessages: reports a standby postponed */
    this.pendingDNMessages = [];
  }

  // ---- DatanodeManager -----------------------------------------------------

  registerDatanode(id) {
    const prev = this.datanodes.get(id);
    if (prev) this.removeReplicas(prev);
    const dn = {
      id,
      alive: true,
      lastHeartbeat: this.rt.now(),
      replicas: 0,
      heartbeatedSinceRegistration: false,
      heartbeatedSinceFailover: false,
      blockReportCount: 0,
      blockContentsStale: true,
      commands: [],
    };
    this.datanodes.set(id, dn);
    this.rt.log.info('datanode registered', { dn: id });
    return dn;
  }

  /** A heartbeat carrying the node's replica count; returns the commands for the node (or a request to register). */
  handleHeartbeat(id, replicas) {
    const dn = this.datanodes.get(id);
    if (!dn || !dn.alive) return [{ type: 'register' }];
    dn.lastHeartbeat = this.rt.now();
    dn.replicas = replicas;
    dn.heartbeatedSinceFailover = true;
    if (!dn.heartbeatedSinceRegistration) {
      dn.heartbeatedSinceRegistration = true;
      if (dn.blockReportCount > 0) this.markFresh(dn);
    }
    return dn.commands.splice(0);
  }

  markFresh(dn) {
    if (!dn.blockContentsStale) return;
    dn.blockContentsStale = false;
    this.rt.log.info('block contents no longer stale', { dn: dn.id });
  }

  /** A standby became active: what it knows of every node's blocks may be out of date. */
  markAllStale() {
    for (const dn of this.datanodes.values()) {
      dn.blockContentsStale = true;
      dn.heartbeatedSinceFailover = false;
    }
    this.rt.log.info('marked all datanodes stale', { datanodes: this.datanodes.size });
  }

  /** HeartbeatManager: nodes silent for deadNodeMs are dead; their replicas no longer count. */
  heartbeatCheck() {
    const now = this.rt.now();
    const sinceLast = now - this.lastHeartbeatCheck;
    this.lastHeartbeatCheck = now;
    if (sinceLast > this.heartbeatRecheckMs) {
      // This NameNode itself stood still (a long GC pause): the heartbeats that came in meanwhile are not
      // handled yet, so the silence is its own. Skip this scan (HDFS's shouldAbortHeartbeatCheck).
      this.rt.log.warn('heartbeat scan late, skipping it', { sinceLastMs: sinceLast });
      return;
    }
    for (const dn of this.datanodes.values()) {
      if (!dn.alive || now - dn.lastHeartbeat <= this.deadNodeMs) continue;
      dn.alive = false;
      dn.commands = [];
      const lost = this.removeReplicas(dn);
      this.rt.log.warn('datanode dead', { dn: dn.id, silentMs: now - dn.lastHeartbeat, replicas: lost });
    }
  }

  removeReplicas(dn) {
    let n = 0;
    for (const b of this.blocksMap.values()) if (b.locations.delete(dn.id)) n++;
    return n;
  }

  liveNodes() {
    return [...this.datanodes.values()].filter((d) => d.alive).map((d) => d.id).sort();
  }

  // ---- block reports -------------------------------------------------------

  /** A full block report replaces what the node is known to hold. */
  processReport(id, blocks) {
    const dn = this.datanodes.get(id);
    if (!dn || !dn.alive) return false;
    const reported = new Set();
    for (const r of blocks) if (this.processReportedReplica(id, r.id, r.gs)) reported.add(r.id);
    for (const [blockId, b] of this.blocksMap) if (!reported.has(blockId)) b.locations.delete(id);
    dn.blockReportCount++;
    if (dn.heartbeatedSinceFailover) this.markFresh(dn);
    this.rt.log.info('block report processed', { dn: id, blocks: reported.size, stale: dn.blockContentsStale });
    return true;
  }

  /** An incremental report: one replica received or deleted. */
  blockReceived(id, blockId, gs) {
    const dn = this.datanodes.get(id);
    if (!dn || !dn.alive || !this.processReportedReplica(id, blockId, gs)) return;
    const p = this.pending.get(blockId);
    if (p) {
      p.targets = p.targets.filter((t) => t !== id);
      if (p.targets.length === 0) this.pending.delete(blockId);
    }
  }

  /**
   * Checks a replica a node reported against its block; true when it counts as a location. A
   * replica with an older generation stamp is corrupt. A standby that has not yet loaded the
   * edits that explain a report (a block it does not know, another generation stamp) queues
   * it and looks at it again once it has (HDFS's PendingDataNodeMessages).
   */
  processReportedReplica(id, blockId, gs) {
    const b = this.blocksMap.get(blockId);
    if (this.postponeBlocksFromFuture && (!b || gs !== b.gs)) {
      this.queueReportedReplica(id, blockId, gs);
      return false;
    }
    if (!b) return false;
    if (gs < b.gs) {
      b.locations.delete(id);
      b.corrupt.add(id);
      this.rt.log.warn('corrupt replica', { block: blockId, dn: id, gs, blockGs: b.gs });
      return false;
    }
    b.locations.add(id);
    b.corrupt.delete(id);
    return true;
  }

  queueReportedReplica(id, blockId, gs) {
    // A node's older reports of the replica no longer tell what it holds.
    this.pendingDNMessages = this.pendingDNMessages.filter((m) => m.dn !== id || m.block !== blockId || m.gs > gs);
    this.pendingDNMessages.push({ dn: id, block: blockId, gs });
  }

  /** Looks again at the postponed reports: after loading edits, and when becoming active. */
  processQueuedReports() {
    const queued = this.pendingDNMessages;
    this.pendingDNMessages = [];
    for (const m of queued) if (this.datanodes.get(m.dn)?.alive) this.processReportedReplica(m.dn, m.block, m.gs);
  }

  /** An incremental report: replicas the node deleted. */
  blocksDeleted(id, blockIds) {
    for (const blockId of blockIds) this.blocksMap.get(blockId)?.locations.delete(id);
  }

  addBlock(blockId, gs) {
    this.blocksMap.set(blockId, { gs, locations: new Set(), corrupt: new Set() });
  }

  /** A recovered pipeline: the block's new generation stamp and the DataNodes that moved their replicas to it. */
  updatePipeline(blockId, gs, nodes) {
    const b = this.blocksMap.get(blockId);
    b.gs = gs;
    b.locations = new Set(nodes.filter((d) => this.datanodes.get(d)?.alive));
  }

  /** Up to n live targets for a new block or replica, avoiding `exclude`. */
  chooseTargets(n, exclude = []) {
    const candidates = this.liveNodes().filter((d) => !exclude.includes(d));
    for (let i = candidates.length - 1; i > 0; i--) {
      const j = Math.floor(this.rt.random() * (i + 1));
      [candidates[i], candidates[j]] = [candidates[j], candidates[i]];
    }
    return candidates.slice(0, n);
  }

  // ---- ReplicationMonitor --------------------------------------------------

  computeReplicationWork() {
    const now = this.rt.now();
    for (const [blockId, p] of this.pending) if (now - p.at > this.pendingTimeoutMs) this.pending.delete(blockId);
    this.postponed.clear();
    for (const [blockId, b] of this.blocksMap) {
      const expected = this.expectedReplication(blockId);
      if (expected === null) continue;
      const live = [...b.locations].filter((d) => this.datanodes.get(d)?.alive).sort();
      if (live.length === 0) continue;
      const inFlight = this.pending.get(blockId)?.targets.length ?? 0;
      if (live.length + inFlight < expected) {
        const exclude = [...live, ...(this.pending.get(blockId)?.targets ?? [])];
        const targets = this.chooseTargets(expected - live.length - inFlight, exclude);
        if (targets.length === 0) continue;
        const source = live[Math.floor(this.rt.random() * live.length)];
        this.datanodes.get(source).commands.push({ type: 'transfer', block: blockId, gs: b.gs, targets });
        this.pending.set(blockId, { targets: [...(this.pending.get(blockId)?.targets ?? []), ...targets], at: now });
        this.rt.log.info('scheduled replication', { block: blockId, source, targets, live: live.length, expected });
      } else if (live.length > expected) {
        if (live.some((d) => this.datanodes.get(d).blockContentsStale)) {
          this.postponed.add(blockId);
          continue;
        }
        const fullest = [...live].sort((x, y) => this.datanodes.get(y).replicas - this.datanodes.get(x).replicas || x.localeCompare(y));
        for (const d of fullest.slice(0, live.length - expected)) {
          b.locations.delete(d);
          this.datanodes.get(d).commands.push({ type: 'invalidate', blocks: [blockId] });
          this.rt.log.info('deleting excess replica', { block: blockId, dn: d, live: live.length, expected });
        }
      }
    }
  }

  // ---- state ---------------------------------------------------------------

  report() {
    return {
      datanodes: [...this.datanodes.values()].map((d) => ({
        id: d.id,
        alive: d.alive,
        stale: d.blockContentsStale,
        blockReports: d.blockReportCount,
        heartbeated: d.heartbeatedSinceFailover,
      })),
      blocks: Object.fromEntries([...this.blocksMap].map(([id, b]) => [id, { gs: b.gs, locations: [...b.locations].sort(), corrupt: [...b.corrupt].sort() }])),
      pendingReplications: this.pending.size,
      postponedMisreplicated: this.postponed.size,
      pendingDatanodeMessages: this.pendingDNMessages.length,
    };
  }
}
