// RegionKV over the shared scenario library: region location through hbase:meta
// (kept in the coordination service), requests retried on NotServingRegionException,
// and cluster-wide checks.
import { ScenarioClient, connectWith, poll, retry, running, states } from '../../../lib/scenario-lib.mjs';

const inRange = (r, row) => row >= r.start && (r.end === '' || row < r.end);
export const hostOf = (server) => String(server).split(',')[0];

export class HBaseClient extends ScenarioClient {
  constructor(t, client) {
    super(t, client, { timeoutMs: 1000, skipDown: true });
    this.cache = null;
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
  rowRequest(type, row, body, timeoutMs = 30000) {
    let reload = false;
    const attempt = async () => {
      const loc = await this.locate(row, reload);
      reload = true;
      if (!loc) return {};
      const r = await this.send(hostOf(loc.server), type, { row, ...body });
      return r.ok ? { done: r } : { again: r };
    };
    return retry(this.t, attempt, { timeoutMs, everyMs: 100, none: { ok: false, error: 'no region' } });
  }

  put(row, value, timeoutMs) {
    return this.rowRequest('Put', row, { value }, timeoutMs);
  }

  get(row, timeoutMs) {
    return this.rowRequest('Get', row, {}, timeoutMs);
  }

  /** The online region holding `row`, waiting (up to timeoutMs) for meta to name one. */
  async regionOf(row, timeoutMs = 5000) {
    return (await poll(this.t, () => this.locate(row, true), { timeoutMs })).value;
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

export const connect = (t, name) => connectWith(HBaseClient, t, name);

/**
 * Waits until an initialized active master sees `servers` region servers, has no
 * region in transition, and every online region in meta is on a live server.
 */
export async function waitForCluster(t, hc, { servers = 3, timeoutMs = 30000 } = {}) {
  const look = async () => {
    const st = await hc.masterStatus();
    const live = new Set(await hc.liveServers());
    const rows = await hc.meta();
    const unserved = rows.filter((r) => !r.offline && !live.has(r.server)).map((r) => r.name);
    const ready = st.ok && st.initialized && st.regionsInTransition === 0 && st.onlineServers.length === servers && live.size === servers && rows.length > 0 && unserved.length === 0;
    return { ready, last: { master: st.id ?? null, initialized: st.initialized ?? false, rit: st.regionsInTransition ?? null, servers: st.onlineServers ?? [], unserved } };
  };
  const r = await poll(t, look, { timeoutMs, done: (v) => v.ready });
  return r.ok ? r.value.last : { ...r.value.last, timedOut: true };
}

/** The regions each running region server serves, and every pair whose key ranges overlap. */
export async function onlineRegions(t) {
  const regions = [];
  for (const s of await states(t, running(t).filter((n) => n.startsWith('rs')))) for (const r of s?.regions ?? []) regions.push({ ...r, host: s.id });
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
  const missing = async () => {
    const s = await t.state('peer').catch(() => null);
    return Object.entries(expected).filter(([k, v]) => s?.rows?.[k] !== v).map(([k]) => k);
  };
  return (await poll(t, missing, { timeoutMs, everyMs: 200, done: (m) => m.length === 0 })).value;
}

/** `n` row keys spread over the whole key space (a..z). */
export function rowsAcross(prefix, n) {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  return Array.from({ length: n }, (_, i) => `${letters[(i * 7) % 26]}${prefix}${String(i).padStart(3, '0')}`);
}

/**
 * Rows written and replicated to the peer, then the server hosting the first region
 * cut off from the peer and given more writes it cannot ship. Returns the rows
 * acknowledged so far, the first region and the host of its server.
 */
export async function unshippedEdits(t, hc) {
  const up = await waitForCluster(t, hc);
  t.check('the cluster comes up with every region assigned', !up.timedOut, up);
  const expected = {};
  for (const row of rowsAcross('a', 20)) {
    const r = await hc.put(row, `v-${row}`);
    t.check('put is acknowledged', r.ok === true, { row, reply: r });
    expected[row] = `v-${row}`;
  }
  const early = await waitForPeer(t, expected);
  t.check('writes are replicated to the peer', early.length === 0, { missing: early });

  const first = await hc.regionOf('a');
  const victim = hostOf(first.server);
  t.addLinkFault({ from: victim, to: 'peer', type: 'ReplicateWALEntry', drop: 1 });
  for (let i = 0; i < 10; i++) {
    const row = `b${String(i).padStart(3, '0')}`;
    const r = await hc.put(row, `w-${row}`);
    t.check('put is acknowledged', r.ok === true, { row, reply: r });
    expected[row] = `w-${row}`;
  }
  return { expected, first, victim };
}

/**
 * Rows written (most of them to the middle region), then the middle region's server
 * killed; `onWorker(host, victim)` is called as soon as the region server splitting the dead
 * server's WAL has written its first recovered edits (the shared filesystem's append
 * replies are slowed so it is still splitting then). Returns the rows acknowledged and
 * the host that was killed.
 */
export async function crashDuringLogSplit(t, hc, onWorker) {
  const up = await waitForCluster(t, hc);
  t.check('the cluster comes up with every region assigned', !up.timedOut, up);
  const expected = {};
  const rows = [...rowsAcross('a', 12), ...Array.from({ length: 48 }, (_, i) => `${'ghijklmno'[i % 9]}m${String(i).padStart(3, '0')}`)];
  for (const row of rows) {
    const r = await hc.put(row, `v-${row}`);
    t.check('put is acknowledged', r.ok === true, { row, reply: r });
    expected[row] = `v-${row}`;
  }
  const victim = hostOf((await hc.regionOf('g')).server);
  const splitting = t.background(() => t.waitFor((e) => e.kind === 'log' && e.msg === 'splitting WAL' && String(e.fields?.wal ?? '').startsWith(`/hbase/WALs/${victim},`), {
    timeoutMs: 30000,
    description: "a region server to start splitting the dead server's WAL",
  }));
  t.addLinkFault({ from: 'zk', to: '*', type: 'FsAppendResp', delayMs: [100, 100] });
  t.note('killing region server', { victim });
  await t.kill(victim);
  const ev = await splitting;
  // The worker is acted on once its first recovered edits reach the filesystem: it is then mid-split.
  await t.waitFor((e) => e.kind === 'recv' && e.node === 'zk' && e.msg === 'FsAppend' && String(e.fields?.body?.file ?? '').includes(`/${victim},`) && String(e.fields?.body?.file ?? '').endsWith('.temp'), {
    timeoutMs: 10000,
    description: 'the first recovered edits to be written',
    includePast: true,
  });
  await onWorker(String(ev.node), victim);
  return { expected, victim };
}
