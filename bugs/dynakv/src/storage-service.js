// storage-service.js — after Cassandra's StorageService: boots the node (its
// generation, tokens and peers from the system tables), reacts to endpoint
// state changes from gossip (NORMAL joins the ring, removed leaves it), and
// serves the client RPCs and the replica verbs.

import { ColumnFamilyStore, cellOf } from './column-family-store.js';
import { Gossiper, STATUS, TOKENS, generationNumber, isDeadState, maxVersion, statusOf } from './gossiper.js';
import { StorageProxy } from './storage-proxy.js';
import { TokenMetadata, initialTokens } from './token-metadata.js';

export class StorageService {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.numTokens = Number(rt.config.numTokens ?? 8);
    this.removedExpireMs = Number(rt.config.removedExpireMs ?? 3000);
    this.tokenMetadata = new TokenMetadata();
    this.cfs = new ColumnFamilyStore(rt);
    this.proxy = new StorageProxy(rt, this);
    this.gossiper = new Gossiper(rt, this);
    /** STARTING until the node gossips, then NORMAL; FAILED if it could not start */
    this.operationMode = 'STARTING';
  }

  start() {
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => this.state());
    const peers = this.loadPeers();
    for (const [ep, tokens] of Object.entries(peers)) this.tokenMetadata.updateNormalTokens(tokens, ep);
    this.tokenMetadata.updateNormalTokens(initialTokens(this.rt.id, this.numTokens), this.rt.id);
    const loaded = this.cfs.open();
    if (Object.keys(peers).length === 0) return this.joinCluster(loaded);
    // A restart: learn what the cluster knows of this node (the shadow round) before gossiping.
    this.gossiper.doShadowRound(Object.keys(peers).sort(), (states) => {
      if (isDeadState(states[this.rt.id])) {
        return this.startupFailed('this node was removed from the cluster and cannot rejoin it', { status: statusOf(states[this.rt.id]) });
      }
      this.joinCluster(loaded);
    });
  }

  joinCluster({ sstables, replayed }) {
    const generation = this.startGossiping();
    this.operationMode = 'NORMAL';
    this.rt.log.info('node started', { generation, peers: this.tokenMetadata.endpoints().length - 1, sstables, replayed });
  }

  startupFailed(reason, fields = {}) {
    this.operationMode = 'FAILED';
    this.rt.log.error('startup failed', { reason, ...fields });
  }

  /** Gossip starts under a new generation: one more than the last one used, persisted first. */
  startGossiping() {
    const local = JSON.parse(this.rt.disk.read('system.local') ?? '{}');
    const generation = Math.max((local.generation ?? 0) + 1, generationNumber(this.rt));
    this.rt.disk.write('system.local', JSON.stringify({ generation }));
    this.rt.disk.sync();
    this.gossiper.start(generation, { [TOKENS]: this.tokenMetadata.getTokens(this.rt.id), [STATUS]: 'NORMAL' });
    return generation;
  }

  // ---- system.peers ----

  loadPeers() {
    return JSON.parse(this.rt.disk.read('system.peers') ?? '{}');
  }

  savePeers(peers) {
    this.rt.disk.write('system.peers', JSON.stringify(peers));
    this.rt.disk.sync();
  }

  // ---- gossip subscriber ----

  onJoin(ep, st) {
    for (const [key, a] of Object.entries(st.appStates)) this.onChange(ep, key, a.value);
  }

  onChange(ep, key, value) {
    if (key !== STATUS) return;
    if (value === 'NORMAL') this.handleStateNormal(ep);
    else if (String(value).startsWith('removed')) this.handleStateRemoved(ep, String(value));
  }

  handleStateNormal(ep) {
    const tokens = this.gossiper.getEndpointState(ep)?.appStates[TOKENS]?.value;
    if (!Array.isArray(tokens)) return;
    if (this.tokenMetadata.isMember(ep)) return;
    this.tokenMetadata.updateNormalTokens(tokens, ep);
    this.savePeers({ ...this.loadPeers(), [ep]: tokens });
    this.rt.log.info('node state jump to NORMAL', { endpoint: ep });
  }

  handleStateRemoved(ep, value) {
    const expireTime = Number(value.split(',')[1]);
    if (this.tokenMetadata.isMember(ep)) {
      this.excise(ep, expireTime);
    } else {
      this.gossiper.addExpireTimeForEndpoint(ep, expireTime);
    }
  }

  /** Takes a removed endpoint out of the ring, the peers table and the hints. */
  excise(ep, expireTime) {
    this.tokenMetadata.removeEndpoint(ep);
    const peers = this.loadPeers();
    delete peers[ep];
    this.savePeers(peers);
    this.proxy.dropHints(ep);
    this.gossiper.addExpireTimeForEndpoint(ep, expireTime);
    this.rt.log.info('removed endpoint from ring', { endpoint: ep });
  }

  onAlive(ep) {
    this.proxy.deliverHints(ep);
  }

  onDead() {}

  onRemove() {}

  // ---- messages ----

  onMessage({ from, type, body }) {
    if (this.rt.nodes.includes(from)) return this.onPeerMessage(from, type, body ?? {});
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: req.reqId ?? null, ...res });
    if (this.operationMode !== 'NORMAL') return reply({ ok: false, error: this.operationMode === 'FAILED' ? 'startup failed' : 'starting' });
    switch (type) {
      case 'Status':
        return reply({ ok: true, ...this.status() });
      case 'Put':
        return this.proxy.mutate(String(req.key), String(req.value), String(req.cl ?? 'QUORUM'), reply);
      case 'Delete':
        return this.proxy.mutate(String(req.key), null, String(req.cl ?? 'QUORUM'), reply);
      case 'Get':
        return this.proxy.read(String(req.key), String(req.cl ?? 'QUORUM'), reply);
      case 'GetEndpoints':
        return reply({ ok: true, endpoints: this.tokenMetadata.naturalEndpoints(String(req.key), this.proxy.rf) });
      case 'Flush':
        return reply({ ok: true, generation: this.cfs.flush() });
      case 'Compact':
        this.cfs.majorCompaction();
        return reply({ ok: true, sstables: this.cfs.describe() });
      case 'RemoveNode':
        return reply(this.removeNode(String(req.node)));
      case 'StopGossiping':
        if (this.gossiper.isEnabled()) this.gossiper.stop();
        return reply({ ok: true });
      case 'StartGossiping':
        if (this.gossiper.isEnabled()) return reply({ ok: true, generation: this.gossiper.getEndpointState(this.rt.id).generation });
        return reply({ ok: true, generation: this.startGossiping() });
      default:
        return reply({ ok: false, error: `unknown request ${type}` });
    }
  }

  onPeerMessage(from, type, body) {
    switch (type) {
      case 'Mutation':
        this.cfs.apply(body.key, cellOf(body));
        return this.rt.send(from, 'MutationResp', { id: body.id });
      case 'MutationResp':
        return this.proxy.onMutationResp(from, body);
      case 'ReadCommand':
        return this.rt.send(from, 'ReadResp', { id: body.id, cell: this.cfs.get(body.key) });
      case 'ReadResp':
        return this.proxy.onReadResp(from, body);
      default:
        return this.gossiper.onMessage(from, type, body);
    }
  }

  /** nodetool removenode: the endpoint must be down and in the ring. */
  removeNode(ep) {
    if (ep === this.rt.id) return { ok: false, error: 'cannot remove self' };
    if (!this.tokenMetadata.isMember(ep)) return { ok: false, error: 'host not found in ring' };
    if (this.gossiper.isAlive(ep)) return { ok: false, error: 'node is alive' };
    const expireTime = this.rt.now() + this.removedExpireMs;
    this.excise(ep, expireTime);
    this.gossiper.advertiseTokenRemoved(ep, expireTime);
    return { ok: true, expireTime };
  }

  // ---- status ----

  status() {
    const endpoints = {};
    for (const [ep, st] of this.gossiper.endpointStateMap) {
      endpoints[ep] = { generation: st.generation, status: statusOf(st), alive: this.gossiper.isAlive(ep) };
    }
    return {
      id: this.rt.id,
      generation: this.gossiper.getEndpointState(this.rt.id)?.generation ?? 0,
      ring: this.tokenMetadata.endpoints(),
      live: [this.rt.id, ...this.gossiper.liveMembers()].sort(),
      unreachable: this.gossiper.unreachableMembers().sort(),
      endpoints,
      hints: this.proxy.hintCount(),
    };
  }

  state() {
    const kv = {};
    let keyCount = 0;
    for (const [k, c] of this.cfs.merged()) {
      if (c.value === null) continue;
      if (keyCount++ < 1000) kv[k] = c.value;
    }
    const gossip = {};
    for (const [ep, st] of this.gossiper.endpointStateMap) {
      gossip[ep] = {
        generation: st.generation,
        maxVersion: maxVersion(st),
        status: statusOf(st),
        alive: this.gossiper.isAlive(ep),
        dead: isDeadState(st),
        expireTime: this.gossiper.expireTimeEndpointMap.get(ep) ?? null,
      };
    }
    return {
      ...this.status(),
      gossip,
      quarantine: [...this.gossiper.justRemovedEndpoints.keys()],
      operationMode: this.operationMode,
      gossipEnabled: this.gossiper.isEnabled(),
      smp: this.cfs.smp,
      keyCount,
      dataHash: this.cfs.hash(),
      tombstones: this.cfs.tombstoneCount(),
      memtable: this.cfs.memtable.size,
      sstables: this.cfs.describe(),
      kv,
    };
  }
}
