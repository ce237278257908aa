// gateway_allocator.js — shard copies kept on disk and the allocation of an existing
// copy as primary, after Elasticsearch's ShardStateMetaData, IndicesStore,
// TransportNodesListGatewayStartedShards, AsyncShardFetch and PrimaryShardAllocator.
// A node keeps its active copy of `docs/0` (a primary, or a replica once recovered) on
// disk with its allocation id and the cluster-state version it was last written at,
// and removes it once the shard is fully active on other nodes. When the primary of
// `docs/0` is unassigned (its node left and no replica could be promoted), the master
// asks every node which copy it holds (internal:gateway/local/started_shards) and,
// once all have answered, allocates the primary to a node holding a copy, reusing the
// copy's allocation id.

export const STARTED_SHARDS = 'internal:gateway/local/started_shards';
const STATE_FILE = 'indices/docs/0/_state';

/** The node's shard copy on disk (ShardStateMetaData and the shard's documents). */
export class ShardStore {
  /** @param {DDBench.NodeRuntime} rt the node runtime @param {() => number} version the applied cluster-state version */
  constructor(rt, version) {
    this.rt = rt;
    this.version = version;
    /** @type {{ allocationId: string, version: number, docs: [string, any, number][] } | null} */
    this.copy = JSON.parse(rt.disk.read(STATE_FILE) ?? 'null');
  }

  /** Writes an active copy and fsyncs it. */
  persist(shard) {
    this.copy = { allocationId: shard.allocationId, version: this.version(), docs: [...shard.docs].map(([id, d]) => [id, d.v, d.seqNo]) };
    this.rt.disk.write(STATE_FILE, JSON.stringify(this.copy));
    this.rt.disk.sync();
  }

  remove(reason) {
    if (!this.copy) return;
    this.rt.log.info('deleting shard data on disk', { allocationId: this.copy.allocationId, reason });
    this.copy = null;
    this.rt.disk.remove(STATE_FILE);
    this.rt.disk.sync();
  }

  /** What the node reports to the master's fetch: the copy's allocation id and version, or null. */
  info() {
    return this.copy ? { allocationId: this.copy.allocationId, version: this.copy.version } : null;
  }
}

/** Master side: fetches the nodes' copies of an unassigned primary and picks the one to open. */
export class GatewayAllocator {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {{ localCopy(): any, fetched(): void }} hooks the master's own copy; called when a fetch round is complete
   */
  constructor(rt, hooks) {
    this.rt = rt;
    this.hooks = hooks;
    this.timeoutMs = Number(rt.config.shardStateTimeoutMs ?? 800);
    /** @type {Map<string, any>} node -> the copy it reported (null: none) */
    this.cache = new Map();
    /** @type {Set<string>} nodes asked and not answered yet */
    this.inFlight = new Set();
  }

  clear() {
    this.cache.clear();
    this.inFlight.clear();
  }

  /** PrimaryShardAllocator: returns `{ node, allocationId, version }` or null (nothing usable yet, or still fetching). */
  primaryCopy(state, inSync) {
    for (const n of [...this.cache.keys()]) if (!state.nodes.includes(n)) this.cache.delete(n);
    for (const n of [...this.inFlight]) if (!state.nodes.includes(n)) this.inFlight.delete(n);
    const missing = state.nodes.filter((n) => !this.cache.has(n) && !this.inFlight.has(n));
    if (missing.length > 0) this.fetch(missing);
    if (this.inFlight.size > 0) return null;
    const found = [...this.cache].filter(([, c]) => c !== null).map(([node, c]) => ({ node, ...c }));
    // A copy that left the in-sync set missed writes the cluster acknowledged; opening it would lose them.
    const usable = found.filter((c) => inSync.includes(c.allocationId));
    if (usable.length === 0) {
      this.rt.log.info('no copy to allocate the primary to', { nodes: [...this.cache.keys()], found: found.map((c) => `${c.node}:${c.allocationId}@${c.version}`), inSync });
      return null;
    }
    usable.sort((a, b) => b.version - a.version || (a.node < b.node ? -1 : 1));
    return usable[0];
  }

  fetch(nodes) {
    this.rt.log.info('fetching shard copies', { nodes });
    for (const n of nodes) {
      if (n === this.rt.id) {
        this.cache.set(n, this.hooks.localCopy());
        continue;
      }
      this.inFlight.add(n);
      this.rt.send(n, STARTED_SHARDS, {});
    }
    if (this.inFlight.size === 0) return;
    this.rt.setTimer(this.timeoutMs, () => {
      let expired = false;
      for (const n of nodes) {
        if (!this.inFlight.delete(n)) continue;
        this.cache.set(n, null);
        expired = true;
      }
      if (expired && this.inFlight.size === 0) this.hooks.fetched();
    });
  }

  onResponse(from, body) {
    if (!this.inFlight.delete(from)) return;
    this.cache.set(from, body.copy ?? null);
    if (this.inFlight.size === 0) this.hooks.fetched();
  }
}
