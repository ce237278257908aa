// allocation_service.js — shard allocation on the master, after Elasticsearch's
// AllocationService and ShardStateAction (master side). One index, `docs`, with
// one shard (`docs/0`) and `numberOfReplicas` replicas. The routing table names
// the primary and each replica by node and allocation id, with the replica's
// state (INITIALIZING until its recovery finishes, then STARTED) and the set of
// in-sync allocation ids: only an in-sync copy may be promoted to primary. A primary
// whose node left with no replica to promote is unassigned until the gateway
// allocator finds a copy on disk to open (gateway/gateway_allocator.js).

export const SHARD = 'docs/0';

export class AllocationService {
  /** @param {DDBench.NodeRuntime} rt the node runtime @param {import('../gateway/gateway_allocator.js').GatewayAllocator} gateway */
  constructor(rt, gateway) {
    this.rt = rt;
    this.gateway = gateway;
    this.numberOfReplicas = Number(rt.config.numberOfReplicas ?? 1);
    this.allocSeq = 0;
  }

  newAllocationId() {
    return `${this.rt.id}-${++this.allocSeq}-${Math.floor(this.rt.random() * 1e6).toString(36)}`;
  }

  /** Returns the state with a routing table that fits its nodes: failed copies removed, primary promoted, replicas assigned. */
  reroute(state) {
    const nodes = state.nodes;
    const prev = state.routing[SHARD];
    /** @type {{ primary: any, replicas: any[], inSync: string[] }} */
    let r = prev ? { primary: prev.primary, replicas: prev.replicas.map((x) => ({ ...x })), inSync: [...prev.inSync] } : { primary: null, replicas: [], inSync: [] };
    r.replicas = r.replicas.filter((x) => nodes.includes(x.node));
    if (r.primary && !nodes.includes(r.primary.node)) {
      const promoted = r.replicas.find((x) => x.state === 'STARTED' && r.inSync.includes(x.allocationId));
      this.rt.log.info('primary shard lost', { shard: SHARD, node: r.primary.node, promoted: promoted?.node ?? null });
      if (promoted) {
        r.primary = { node: promoted.node, allocationId: promoted.allocationId };
        r.replicas = r.replicas.filter((x) => x !== promoted);
      } else {
        // Unassigned until a copy on disk is opened as primary; replicas cannot recover without one.
        r.primary = null;
        r.replicas = [];
      }
    }
    // While the primary is unassigned the in-sync set keeps naming the copies that hold every acknowledged write.
    if (r.primary) {
      r.inSync = r.inSync.filter((id) => id === r.primary.allocationId || r.replicas.some((x) => x.allocationId === id));
      this.gateway.clear();
    } else if (prev?.created) {
      const copy = this.gateway.primaryCopy(state, r.inSync);
      if (copy) {
        r.primary = { node: copy.node, allocationId: copy.allocationId };
        r.inSync = [copy.allocationId];
        this.gateway.clear();
        this.rt.log.info('allocated existing primary copy', { shard: SHARD, node: copy.node, allocationId: copy.allocationId, version: copy.version });
      }
    }
    // Data goes to the nodes other than the master when there are enough of them.
    const holders = () => [r.primary?.node, ...r.replicas.map((x) => x.node)].filter(Boolean);
    const pool = () => {
      const free = nodes.filter((n) => !holders().includes(n));
      const data = free.filter((n) => n !== state.master);
      return data.length > 0 ? data : free;
    };
    if (!r.primary && r.inSync.length === 0 && !prev?.created) {
      const node = pool()[1 % Math.max(1, pool().length)] ?? null;
      if (node) {
        const allocationId = this.newAllocationId();
        r.primary = { node, allocationId };
        r.inSync = [allocationId];
        this.rt.log.info('allocated new primary', { shard: SHARD, node });
      }
    }
    if (r.primary && nodes.includes(r.primary.node)) {
      while (r.replicas.length < this.numberOfReplicas && pool().length > 0) {
        const node = pool()[0];
        r.replicas.push({ node, allocationId: this.newAllocationId(), state: 'INITIALIZING' });
        this.rt.log.info('allocated replica', { shard: SHARD, node });
      }
    }
    return { ...state, routing: { [SHARD]: { ...r, created: Boolean(prev?.created || r.primary) } } };
  }

  /** shard-started: a replica finished recovering from the primary. */
  applyStartedShard(state, allocationId) {
    const r = state.routing[SHARD];
    if (!r) return null;
    const replica = r.replicas.find((x) => x.allocationId === allocationId && x.state === 'INITIALIZING');
    if (!replica) return null;
    const replicas = r.replicas.map((x) => (x === replica ? { ...x, state: 'STARTED' } : x));
    return { ...state, routing: { [SHARD]: { ...r, replicas, inSync: [...r.inSync, allocationId] } } };
  }

  /** shard-failed: a copy is removed from the routing table and from the in-sync set. */
  applyFailedShard(state, allocationId) {
    const r = state.routing[SHARD];
    if (!r || !r.replicas.some((x) => x.allocationId === allocationId)) return null;
    const replicas = r.replicas.filter((x) => x.allocationId !== allocationId);
    return { ...state, routing: { [SHARD]: { ...r, replicas, inSync: r.inSync.filter((id) => id !== allocationId) } } };
  }
}
