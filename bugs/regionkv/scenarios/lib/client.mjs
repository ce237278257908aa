// Client helpers shared by the RegionKV scenarios: region location through
// hbase:meta (kept in the coordination service), requests retried on
// NotServingRegionException, and cluster-wide checks.

/** Resolves `expired` after ms, on the scenario's clock (real or simulated). */
export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

const inRange = (r, row) => row >= r.start && (r.end === '' || row < r.end);
export const hostOf = (server) => String(server).split(',')[0];

export class HBaseClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
    this.cache = null;
  }

  running() {
    return new Set(this.t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id));
  }

  /** A raw request to one node; a timeout or a dead node becomes { ok: false, error }. */
  async send(node, type, body, timeoutMs = 1000) {
    if (!this.running().has(node)) return { ok: false, error: 'down' };
    try {
      return await this.c.request(node, type, body, timeoutMs);
    } catch (e) {
      return { ok: false, error: 'timeout', detail: String(e?.message ?? e) };
    }
  }

  /** Every row of hbase:meta. */
  async meta() {
    const r = await this.send('zk', 'ZkChildren', { path: '/hbase/meta' });
    return r.ok ? r.children.map((c) => c.data) : [];
  }

  async liveServers() {
    const r = await this.send('zk', 'ZkChildren', { path: '/hbase/rs' });
    return r.ok ? r.children.map((c) => c.name) : [];
  }

  async locate(row, reload = false) {
    if (reload || !this.cache) this.cache = await this.meta();
    return this.cache.find((r) => !r.offline && r.server && inRange(r, row)) ?? null;
  }

  /** A request for `row`, sent to the server meta names, retried until timeoutMs. */
  async rowRequest(type, row, body, timeoutMs = 30000) {
    const d = deadline(this.t, timeoutMs);
    let last = { ok: false, error: 'no region' };
    let reload = false;
    while (!d.expired) {
      const loc = await this.locate(row, reload);
      if (loc) {
        const r = await this.send(hostOf(loc.server), type, { row, ...body });
        if (r.ok) return r;
        last = r;
      }
      reload = true;
      await this.t.sleep(100);
    }
    return last;
  }

  put(row, value, timeoutMs) {
    return this.rowRequest('Put', row, { value }, timeoutMs);
  }

  get(row, timeoutMs) {
    return this.rowRequest('Get', row, {}, timeoutMs);
  }

  /** The online region holding `row`, waiting (up to timeoutMs) for meta to name one. */
  async regionOf(row, timeoutMs = 5000) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const loc = await this.locate(row, true);
      if (loc || d.expired) return loc;
      await this.t.sleep(100);
    }
  }

  async activeMaster() {
    const r = await this.send('zk', 'ZkGet', { path: '/hbase/master' });
    return r.ok && r.exists ? r.data : null;
  }

  async masterStatus() {
    const m = await this.activeMaster();
    return m ? this.send(m, 'Status', {}) : { ok: false, error: 'no active master' };
  }
}

export async function connect(t, name) {
  return new HBaseClient(t, await t.client(name));
}

/**
 * Waits until an initialized active master sees `servers` region servers, has no
 * region in transition, and every online region in meta is on a live server.
 */
export async function waitForCluster(t, hc, { servers = 3, timeoutMs = 30000 } = {}) {
  const d = deadline(t, timeoutMs);
  let last = null;
  for (;;) {
    const st = await hc.masterStatus();
    const live = new Set(await hc.liveServers());
    const rows = await hc.meta();
    const unserved = rows.filter((r) => !r.offline && !live.has(r.server)).map((r) => r.name);
    last = { master: st.id ?? null, initialized: st.initialized ?? false, rit: st.regionsInTransition ?? null, servers: st.onlineServers ?? [], unserved };
    if (st.ok && st.initialized && st.regionsInTransition === 0 && st.onlineServers.length === servers && live.size === servers && rows.length > 0 && unserved.length === 0) return last;
    if (d.expired) return { ...last, timedOut: true };
    await t.sleep(100);
  }
}

/** The regions each running region server serves, and every pair whose key ranges overlap. */
export async function onlineRegions(t) {
  const servers = t.nodeInfo().filter((n) => n.status === 'running' && n.id.startsWith('rs')).map((n) => n.id);
  const states = await Promise.all(servers.map((n) => t.state(n).catch(() => null)));
  const regions = [];
  for (const s of states) for (const r of s?.regions ?? []) regions.push({ ...r, host: s.id });
  const overlaps = [];
  for (let i = 0; i < regions.length; i++) {
    for (let j = i + 1; j < regions.length; j++) {
      const a = regions[i];
      const b = regions[j];
      const before = (x, y) => x.end !== '' && x.end <= y.start;
      if (!before(a, b) && !before(b, a)) overlaps.push({ a: `${a.name}@${a.host}`, b: `${b.name}@${b.host}` });
    }
  }
  return { regions: regions.map((r) => `${r.name}@${r.host}`), overlaps };
}

/** Waits until the peer cluster holds every row of `expected` with its value; returns the rows still missing. */
export async function waitForPeer(t, expected, timeoutMs = 8000) {
  const d = deadline(t, timeoutMs);
  for (;;) {
    const s = await t.state('peer').catch(() => null);
    const missing = Object.entries(expected).filter(([k, v]) => s?.rows?.[k] !== v).map(([k]) => k);
    if (missing.length === 0 || d.expired) return missing;
    await t.sleep(200);
  }
}

/** `n` row keys spread over the whole key space (a..z). */
export function rowsAcross(prefix, n) {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  return Array.from({ length: n }, (_, i) => `${letters[(i * 7) % 26]}${prefix}${String(i).padStart(3, '0')}`);
}
