// storage-proxy.js — after Cassandra's StorageProxy and HintedHandOffManager:
// the coordinator side of writes and reads at a consistency level (ONE, QUORUM,
// ALL), hints for replicas that are down or do not answer, and read repair. A
// deletion is written like any other value, as a tombstone cell.

import { isTombstone, reconcile } from './column-family-store.js';

export function blockFor(cl, rf) {
  if (cl === 'ONE') return 1;
  if (cl === 'ALL') return rf;
  return Math.floor(rf / 2) + 1;
}

export class StorageProxy {
  /** @param {DDBench.NodeRuntime} rt @param {any} service the StorageService */
  constructor(rt, service) {
    this.rt = rt;
    this.service = service;
    this.rf = Number(rt.config.replicationFactor ?? 3);
    this.writeTimeoutMs = Number(rt.config.writeTimeoutMs ?? 2000);
    this.readTimeoutMs = Number(rt.config.readTimeoutMs ?? 2000);
    this.seq = 0;
    this.lastTimestamp = 0;
    /** @type {Map<string, any>} handlers of writes and reads in flight, by id */
    this.pending = new Map();
    /** @type {Map<string, {key: string, value: string | null, timestamp: number, deletedAt?: number}[]>} hints by target endpoint */
    this.hints = new Map();
  }

  nextId() {
    return `${this.rt.id}-${++this.seq}`;
  }

  /** Microseconds, strictly increasing on this coordinator. */
  timestamp() {
    this.lastTimestamp = Math.max(this.lastTimestamp + 1, Math.floor(this.rt.now() * 1000));
    return this.lastTimestamp;
  }

  // ---- writes ----

  /** Writes `value` (null: deletes the key, writing a tombstone) at consistency `cl`. */
  mutate(key, value, cl, done) {
    const replicas = this.service.tokenMetadata.naturalEndpoints(key, this.rf);
    const live = replicas.filter((ep) => this.service.gossiper.isAlive(ep));
    const need = blockFor(cl, this.rf);
    if (live.length < need) return done({ ok: false, error: 'unavailable', required: need, alive: live.length, replicas });
    const timestamp = this.timestamp();
    const cell = value === null ? { value: null, timestamp, deletedAt: this.rt.now() } : { value, timestamp };
    for (const ep of replicas) if (!live.includes(ep)) this.writeHint(ep, key, cell);
    const id = this.nextId();
    const h = { acks: new Set(), need, done, finished: false };
    this.pending.set(id, h);
    for (const ep of live) {
      if (ep === this.rt.id) {
        this.service.cfs.apply(key, cell);
        this.onMutationResp(ep, { id });
      } else {
        this.rt.send(ep, 'Mutation', { id, key, ...cell });
      }
    }
    this.rt.setTimer(this.writeTimeoutMs, () => {
      this.pending.delete(id);
      for (const ep of live) if (!h.acks.has(ep)) this.writeHint(ep, key, cell);
      if (!h.finished) {
        h.finished = true;
        done({ ok: false, error: 'timeout', acks: h.acks.size, required: need });
      }
    });
  }

  onMutationResp(from, { id }) {
    const h = this.pending.get(id);
    if (!h) return;
    if (h.hint) {
      this.pending.delete(id);
      return;
    }
    h.acks.add(from);
    if (!h.finished && h.acks.size >= h.need) {
      h.finished = true;
      h.done({ ok: true, timestamp: this.lastTimestamp });
    }
  }

  // ---- hints ----

  writeHint(ep, key, cell) {
    if (!this.hints.has(ep)) this.hints.set(ep, []);
    this.hints.get(ep).push({ key, ...cell });
  }

  /** Replays the hints held for an endpoint that came back. */
  deliverHints(ep) {
    const hints = this.hints.get(ep);
    if (!hints || hints.length === 0) return;
    this.hints.delete(ep);
    this.rt.log.info('delivering hints', { endpoint: ep, count: hints.length });
    for (const hint of hints) {
      const id = this.nextId();
      this.pending.set(id, { hint: true });
      this.rt.send(ep, 'Mutation', { id, ...hint });
    }
  }

  dropHints(ep) {
    this.hints.delete(ep);
  }

  hintCount() {
    let n = 0;
    for (const h of this.hints.values()) n += h.length;
    return n;
  }

  // ---- reads ----

  read(key, cl, done) {
    const replicas = this.service.tokenMetadata.naturalEndpoints(key, this.rf);
    const live = replicas.filter((ep) => this.service.gossiper.isAlive(ep));
    const need = blockFor(cl, this.rf);
    if (live.length < need) return done({ ok: false, error: 'unavailable', required: need, alive: live.length, replicas });
    const id = this.nextId();
    const h = { key, need, responses: new Map(), done, finished: false };
    this.pending.set(id, h);
    for (const ep of live) {
      if (ep === this.rt.id) this.onReadResp(ep, { id, cell: this.service.cfs.get(key) });
      else this.rt.send(ep, 'ReadCommand', { id, key });
    }
    this.rt.setTimer(this.readTimeoutMs, () => {
      this.pending.delete(id);
      if (!h.finished) {
        h.finished = true;
        done({ ok: false, error: 'timeout', responses: h.responses.size, required: need });
      }
    });
  }

  onReadResp(from, { id, cell }) {
    const h = this.pending.get(id);
    if (!h) return;
    h.responses.set(from, cell ?? null);
    if (h.finished) {
      this.readRepair(h);
      return;
    }
    if (h.responses.size < h.need) return;
    h.finished = true;
    const newest = this.readRepair(h);
    h.done(newest && !isTombstone(newest) ? { ok: true, found: true, value: newest.value, timestamp: newest.timestamp } : { ok: true, found: false });
  }

  /** Sends the newest cell (a tombstone too) to every replica that answered with an older one. */
  readRepair(h) {
    let newest = null;
    for (const c of h.responses.values()) newest = reconcile(newest, c);
    if (!newest) return null;
    for (const [ep, c] of h.responses) {
      if (c && reconcile(c, newest) === c) continue;
      this.rt.log.debug('read repair', { endpoint: ep, key: h.key });
      if (ep === this.rt.id) this.service.cfs.apply(h.key, newest);
      else this.rt.send(ep, 'Mutation', { id: this.nextId(), key: h.key, ...newest });
      h.responses.set(ep, newest);
    }
    return newest;
  }
}
