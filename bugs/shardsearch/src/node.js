// node.js — one Elasticsearch-style node, after org.elasticsearch.node.Node and
// IndicesClusterStateService: it runs Zen discovery, applies every published
// cluster state to its local shard copy (creates, promotes, recovers or deletes
// it), coordinates client requests (routing them to the primary), and, while it is
// the master, handles shard-started and shard-failed requests. A node asked to shut
// down closes its services in Node.close's order (discovery, cluster service,
// transport) and then ignores every message until it is restarted.

import { AllocationService, SHARD } from './cluster/allocation_service.js';
import { ZenDiscovery } from './discovery/zen_discovery.js';
import { GatewayAllocator, STARTED_SHARDS, ShardStore } from './gateway/gateway_allocator.js';
import { IndexShard, ShardStateAction, TransportReplicationAction } from './index/transport_replication_action.js';

export class EsNode {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.store = new ShardStore(rt, () => this.discovery.state.version);
    this.gateway = new GatewayAllocator(rt, {
      localCopy: () => this.store.info(),
      fetched: () => this.onShardCopiesFetched(),
    });
    this.allocation = new AllocationService(rt, this.gateway);
    this.discovery = new ZenDiscovery(rt, {
      applyClusterState: (s) => this.applyClusterState(s),
      reroute: (s) => this.allocation.reroute(s),
    });
    /** @type {IndexShard | null} */
    this.localShard = null;
    /** the peer recovery in flight: request id and source node */
    this.recovery = null;
    this.startedInFlight = false;
    this.shardStateAction = new ShardStateAction(rt, () => this.discovery.state.master);
    this.replication = new TransportReplicationAction(rt, {
      state: () => this.discovery.state,
      shard: () => this.localShard,
      shardStateAction: this.shardStateAction,
    });
    this.forwardTimeoutMs = Number(rt.config.forwardTimeoutMs ?? 2000);
    this.seq = 0;
    /** @type {Map<number, (res: any) => void>} requests forwarded to the primary's node */
    this.forwarded = new Map();
    this.closed = false;
  }

  start() {
    this.rt.onMessage((m) => this.onMessage(m));
    this.rt.exposeState(() => this.nodeState());
    this.rt.log.info('node started', {});
    this.discovery.start();
  }

  // ---- cluster state application (IndicesClusterStateService) ------------------------

  applyClusterState(state) {
    const r = state.routing[SHARD];
    if (!r || state.master === null) return;
    const me = this.rt.id;
    const mine = r.primary?.node === me ? { ...r.primary, primary: true } : r.replicas.find((x) => x.node === me);
    const shard = this.localShard;
    if (shard && (!mine || mine.allocationId !== shard.allocationId)) {
      this.rt.log.info('deleting shard copy no longer allocated here', { shard: SHARD, allocationId: shard.allocationId, docs: shard.docs.size });
      this.localShard = null;
      this.recovery = null;
    }
    if (!mine) {
      // IndicesStore: the data of a copy no longer allocated here goes once the shard is fully active elsewhere.
      const active = r.primary && state.nodes.includes(r.primary.node) && r.replicas.length > 0 && r.replicas.every((x) => x.state === 'STARTED');
      if (active) this.store.remove('shard is active on other nodes');
      return;
    }
    if (!this.localShard) {
      const shard = new IndexShard(mine.allocationId, Boolean(mine.primary), this.store);
      this.localShard = shard;
      if (mine.primary) {
        const onDisk = this.store.copy?.allocationId === mine.allocationId ? this.store.copy : null;
        for (const [id, v, seqNo] of onDisk?.docs ?? []) shard.index(id, v, seqNo);
        shard.activate();
        if (onDisk) this.rt.log.info('opened primary shard from disk', { shard: SHARD, allocationId: mine.allocationId, version: onDisk.version, docs: shard.docs.size });
        else this.rt.log.info('created primary shard', { shard: SHARD });
      }
    } else if (mine.primary && !this.localShard.primary) {
      this.localShard.primary = true;
      this.localShard.activate();
      this.rt.log.info('promoted to primary', { shard: SHARD, allocationId: mine.allocationId, docs: this.localShard.docs.size });
    }
    if (mine.primary) return;
    if (this.localShard.recovering && !this.recovery) this.startRecovery(r.primary?.node);
    // A copy that finished recovering but is still INITIALIZING (the master changed meanwhile) reports again.
    if (!this.localShard.recovering && mine.state === 'INITIALIZING') this.sendShardStarted();
  }

  startRecovery(source) {
    if (!source) return;
    const reqId = ++this.seq;
    this.recovery = { reqId, source };
    this.rt.log.info('starting peer recovery', { shard: SHARD, source });
    this.rt.send(source, 'internal:index/shard/recovery/start_recovery', { reqId, allocationId: this.localShard.allocationId });
    this.rt.setTimer(this.forwardTimeoutMs, () => {
      if (this.recovery?.reqId === reqId) this.retryRecovery('no answer from the recovery source');
    });
  }

  retryRecovery(reason) {
    this.rt.log.warn('peer recovery failed, retrying', { reason });
    this.recovery = null;
    this.rt.setTimer(200, () => {
      if (!this.closed && this.localShard?.recovering && !this.recovery) this.startRecovery(this.discovery.state.routing[SHARD]?.primary?.node);
    });
  }

  onRecoveryRequest(from, body) {
    const shard = this.localShard;
    if (!shard?.primary) return this.rt.send(from, 'internal:index/shard/recovery/start_recoveryResp', { reqId: body.reqId, ok: false });
    const docs = [...shard.docs].map(([id, d]) => [id, d.v, d.seqNo]);
    this.rt.send(from, 'internal:index/shard/recovery/start_recoveryResp', { reqId: body.reqId, ok: true, docs });
  }

  onRecoveryResponse(from, body) {
    const shard = this.localShard;
    if (!shard?.recovering || this.recovery?.reqId !== body.reqId) return;
    if (!body.ok) return this.retryRecovery(`${from} does not hold the primary`);
    this.recovery = null;
    for (const [id, v, seqNo] of body.docs) shard.index(id, v, seqNo);
    shard.activate();
    this.rt.log.info('peer recovery done', { source: from, docs: shard.docs.size });
    this.sendShardStarted();
  }

  sendShardStarted() {
    if (this.startedInFlight) return;
    this.startedInFlight = true;
    this.shardStateAction
      .shardStarted(this.localShard.allocationId)
      .catch((e) => this.rt.log.warn('failed to send shard started', { error: e.message }))
      .finally(() => {
        this.startedInFlight = false;
      });
  }

  // ---- master side of shard state changes (ShardStateAction handlers) ----------------

  onShardStateRequest(from, type, body) {
    const reply = (res) => this.rt.send(from, type + 'Resp', { id: body.id, ...res });
    const d = this.discovery;
    if (!d.isMaster()) return reply({ ok: false, error: 'NotMasterException' });
    const apply = type === 'internal:cluster/shard/started' ? this.allocation.applyStartedShard : this.allocation.applyFailedShard;
    const next = apply.call(this.allocation, d.state, body.allocationId);
    if (next) {
      this.rt.log.info(type === 'internal:cluster/shard/started' ? 'shard started' : 'shard failed', { allocationId: body.allocationId, from, reason: body.reason ?? null });
      d.updateState(`${type} ${body.allocationId}`, () => next);
      d.publish();
    }
    reply({ ok: true });
  }

  /** The master has every node's answer about its shard copy: reroute, which may open one as primary. */
  onShardCopiesFetched() {
    const d = this.discovery;
    if (!d.isMaster()) return;
    d.updateState('async_shard_fetch', (s) => s);
    d.publish();
  }

  // ---- messages -----------------------------------------------------------------------

  onMessage({ from, type, body }) {
    if (this.closed) return;
    body = body ?? {};
    if (this.rt.nodes.includes(from)) return this.onNodeMessage(from, type, body);
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: body.reqId ?? null, ...res });
    switch (type) {
      case 'index':
        return this.coordinate('indices:data/write/index', { id: String(body.id), doc: body.doc ?? null }, reply);
      case 'get':
        return this.coordinate('indices:data/read/get', { id: String(body.id) }, reply);
      case 'health':
        return reply({ ok: true, ...this.health() });
      case 'shutdown':
        reply({ ok: true, node: this.rt.id });
        return this.close();
      default:
        return reply({ ok: false, error: `unknown action ${type}` });
    }
  }

  /** Node.close: stop discovery (leaving the cluster), close the cluster service, then the transport. */
  close() {
    this.rt.log.info('stopping node', { shard: this.localShard ? { primary: this.localShard.primary, docs: this.localShard.docs.size } : null });
    this.closed = true;
    this.discovery.stop();
    this.shardStateAction.close();
    this.replication.close();
    const waiting = [...this.forwarded.values()];
    this.forwarded.clear();
    for (const cb of waiting) cb({ ok: false, error: 'NodeClosedException' });
    this.rt.log.info('node closed', {});
  }

  onNodeMessage(from, type, body) {
    const d = this.discovery;
    switch (type) {
      case 'zen/ping': return d.onPing(from, body);
      case 'zen/pingResp': return d.onPingResp(from, body);
      case 'zen/join': return d.onJoin(from);
      case 'zen/joinResp': return d.onJoinResp(from, body);
      case 'zen/leave': return d.onLeave(from);
      case 'zen/publish': return d.onPublish(from, body);
      case 'zen/fd/ping': return d.onNodePing(from);
      case 'zen/fd/pingResp': return d.onNodePingResp(from, body);
      case 'zen/fd/masterPing': return d.onMasterPing(from);
      case 'zen/fd/masterPingResp': return d.onMasterPingResp(from, body);
      case 'internal:cluster/shard/failure':
      case 'internal:cluster/shard/started':
        return this.onShardStateRequest(from, type, body);
      case 'internal:cluster/shard/failureResp':
      case 'internal:cluster/shard/startedResp':
        return this.shardStateAction.onResponse(body);
      case STARTED_SHARDS: return this.rt.send(from, STARTED_SHARDS + 'Resp', { copy: this.store.info() });
      case STARTED_SHARDS + 'Resp': return this.gateway.onResponse(from, body);
      case 'internal:index/shard/recovery/start_recovery': return this.onRecoveryRequest(from, body);
      case 'internal:index/shard/recovery/start_recoveryResp': return this.onRecoveryResponse(from, body);
      case 'indices:data/write/index[r]': return this.replication.performOnReplica(from, body);
      case 'indices:data/write/index[r]Resp': return this.replication.onReplicaResponse(body);
      case 'indices:data/write/index':
      case 'indices:data/read/get':
        return this.performOnPrimary(type, body, (res) => this.rt.send(from, type + 'Resp', { fwd: body.fwd, ...res }));
      case 'indices:data/write/indexResp':
      case 'indices:data/read/getResp': {
        const cb = this.forwarded.get(body.fwd);
        if (cb) {
          this.forwarded.delete(body.fwd);
          cb(body);
        }
        return;
      }
      default:
        this.rt.log.warn('unknown node message', { from, type });
    }
  }

  /** A client request: blocked without a master, otherwise run on (or forwarded to) the primary's node. */
  coordinate(action, req, reply) {
    const state = this.discovery.state;
    if (state.master === null) return reply({ ok: false, error: 'ClusterBlockException', errmsg: 'blocked by: [SERVICE_UNAVAILABLE/2/no master]' });
    const primary = state.routing[SHARD]?.primary?.node;
    if (!primary || !state.nodes.includes(primary)) return reply({ ok: false, error: 'UnavailableShardsException', errmsg: 'primary shard is not active' });
    if (primary === this.rt.id) return this.performOnPrimary(action, req, reply);
    const fwd = ++this.seq;
    const timer = this.rt.setTimer(this.forwardTimeoutMs, () => {
      if (this.forwarded.delete(fwd)) reply({ ok: false, error: 'timeout', errmsg: `no answer from primary ${primary}` });
    });
    this.forwarded.set(fwd, (res) => {
      timer.cancel();
      const { fwd: _f, ...rest } = res;
      reply(rest);
    });
    this.rt.send(primary, action, { ...req, fwd });
  }

  performOnPrimary(action, req, reply) {
    if (action === 'indices:data/write/index') return this.replication.performOnPrimary(req, reply);
    const shard = this.localShard;
    if (!shard?.primary) return reply({ ok: false, error: 'ShardNotFoundException' });
    const d = shard.docs.get(req.id);
    reply({ ok: true, found: d !== undefined, doc: d?.v ?? null, seqNo: d?.seqNo ?? null });
  }

  health() {
    const s = this.discovery.state;
    const r = s.routing[SHARD];
    const started = r ? r.replicas.filter((x) => x.state === 'STARTED').length : 0;
    const status = !r?.primary || !s.nodes.includes(r.primary.node) ? 'red' : started === r.replicas.length && r.replicas.length > 0 ? 'green' : 'yellow';
    return { node: this.rt.id, master: s.master, version: s.version, nodes: s.nodes, status, primary: r?.primary?.node ?? null, replicas: r ? r.replicas.map((x) => ({ node: x.node, state: x.state })) : [] };
  }

  nodeState() {
    const docs = {};
    for (const [id, d] of this.localShard?.docs ?? []) docs[id] = d.v;
    return {
      ...this.health(),
      joining: this.discovery.joining,
      discovered: this.discovery.discovered,
      shard: this.localShard ? { allocationId: this.localShard.allocationId, primary: this.localShard.primary, recovering: this.localShard.recovering, maxSeqNo: this.localShard.maxSeqNo, docCount: this.localShard.docs.size } : null,
      onDisk: this.store.info(),
      docs,
    };
  }
}

/** @param {DDBench.NodeRuntime} rt the node runtime */
export function createNode(rt) {
  const node = new EsNode(rt);
  return {
    start() {
      node.start();
    },
  };
}
