// DynaKV over the shared scenario library: requests to a chosen coordinator, and
// waiting for every node's view of the ring and of liveness.
import { ScenarioClient, connectWith, pick, poll } from '../../../lib/scenario-lib.mjs';

export class DkvClient extends ScenarioClient {
  constructor(t, client) {
    super(t, client, { timeoutMs: 3000, timeoutError: 'client timeout' });
  }

  put(node, key, value, cl = 'QUORUM') {
    return this.send(node, 'Put', { key, value, cl });
  }

  get(node, key, cl = 'QUORUM') {
    return this.send(node, 'Get', { key, cl });
  }

  del(node, key, cl = 'QUORUM') {
    return this.send(node, 'Delete', { key, cl });
  }

  flush(node) {
    return this.send(node, 'Flush', {});
  }

  /** Flushes every node, in turn. */
  async flushAll(nodes = this.t.nodes) {
    const replies = [];
    for (const n of nodes) replies.push(await this.flush(n));
    return replies;
  }

  status(node) {
    return this.send(node, 'Status', {}, 1000);
  }

  /**
   * Waits until every node in `nodes` sees exactly `live` as its live set (and, if given, `ring`
   * as the ring). Returns the last statuses and whether the wait succeeded.
   */
  async waitViews(nodes, { live, ring, timeoutMs = 10000 }) {
    const want = [...live].sort().join(',');
    const wantRing = ring ? [...ring].sort().join(',') : null;
    const agree = (statuses) => statuses.every((s) => s.ok && s.live.join(',') === want && (wantRing === null || s.ring.join(',') === wantRing));
    const r = await poll(this.t, () => Promise.all(nodes.map((n) => this.status(n))), { timeoutMs, done: agree });
    return { ok: r.ok, statuses: r.value };
  }
}

/** The partitioner's token of a key (32-bit FNV-1a) and so the shard of a node that holds it. */
export function shardOf(key, smp) {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % smp;
}

/** `n` keys `prefix/i` of each shard: an array per shard. */
export function keysByShard(prefix, n, smp) {
  const out = Array.from({ length: smp }, () => []);
  for (let i = 0; out.some((ks) => ks.length < n); i++) {
    const k = `${prefix}/${i}`;
    const s = shardOf(k, smp);
    if (out[s].length < n) out[s].push(k);
  }
  return out;
}

export const connect = (t, name) => connectWith(DkvClient, t, name);

export const brief = (s) => pick(s, ['id', 'generation', 'ring', 'live', 'unreachable', 'hints', 'keyCount', 'dataHash', 'tombstones', 'sstables']);
