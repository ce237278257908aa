// What the Redis Cluster scenarios need: commands that never throw, forming the cluster
// (CLUSTER MEET, slots, replicas), hash slots of keys, each node's role and replication
// offset, and the cluster table as a node sees it.

/** A command that never throws: { ok, data, error }; ok is false for an error reply or no reply. */
export async function call(c, node, type, body = {}, timeoutMs = 3000) {
  try {
    const r = await c.request(node, type, body, timeoutMs);
    return r?.status === 200 ? { ok: true, data: r.data } : { ok: false, data: undefined, error: String(r?.error ?? `status ${r?.status}`) };
  } catch (err) {
    return { ok: false, data: undefined, error: String(err?.message ?? err) };
  }
}

/** CRC16 (XMODEM), Redis Cluster's key hash. */
function crc16(bytes) {
  let crc = 0;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The hash slot of a key (its {tag} when it has a non-empty one). */
export function slotOf(key) {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(Buffer.from(hashed)) % 16384;
}

/** `count` keys named `<prefix>-<i>` whose slots lie in [from, to]. */
export function keysIn(prefix, from, to, count) {
  const keys = [];
  for (let i = 0; keys.length < count; i++) {
    const k = `${prefix}-${i}`;
    const s = slotOf(k);
    if (s >= from && s <= to) keys.push(k);
  }
  return keys;
}

/** CLUSTER NODES as rows: { id, flags, master, epoch, link, slots: [[from, to]] }. */
export function parseNodes(text) {
  return String(text ?? '')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const [id, addr, flags, master, , , epoch, link, ...slots] = line.trim().split(/\s+/);
      return {
        id,
        addr,
        flags: flags.split(','),
        master: master === '-' ? undefined : master,
        epoch: Number(epoch),
        link,
        slots: slots.filter((s) => !s.startsWith('[')).map((s) => (s.includes('-') ? s.split('-').map(Number) : [Number(s), Number(s)])),
      };
    });
}

/** The cluster table as `viewer` sees it, or undefined when it does not answer. */
export async function nodesSeenBy(c, viewer) {
  const r = await call(c, viewer, 'ClusterNodes', {}, 2000);
  return r.ok ? parseNodes(r.data) : undefined;
}

/** One field of CLUSTER INFO or INFO text (`cluster_state`, `master_link_status`, ...). */
export function infoField(text, name) {
  const m = new RegExp(`^${name}:(.*)$`, 'm').exec(String(text ?? ''));
  return m ? m[1].trim() : undefined;
}

/** ROLE: { role: 'master', offset } or { role: 'slave', link, offset }, or undefined when the node does not answer. */
export async function role(c, node) {
  const r = await call(c, node, 'Role', {}, 1500);
  if (!r.ok || !Array.isArray(r.data)) return undefined;
  return r.data[0] === 'master' ? { role: 'master', offset: Number(r.data[1]) } : { role: String(r.data[0]), link: String(r.data[3]), offset: Number(r.data[4]) };
}

/**
 * Forms the cluster: every node meets the first, each master gets its slot range, each
 * replica follows its master; then waits until every node sees the cluster as ok and
 * every replica's link to its master is up. Returns the nodes' cluster ids by name.
 */
export async function formCluster(t, c, { masters, replicas }) {
  const ids = {};
  for (const n of t.nodes) {
    const r = await t.until(async () => {
      const x = await call(c, n, 'ClusterMyId');
      return x.ok ? x : undefined;
    }, { timeoutMs: 10000, everyMs: 200, description: `${n} to give its cluster id` });
    ids[n] = String(r.data);
  }
  const [first] = t.nodes;
  for (const n of t.nodes.slice(1)) {
    const r = await call(c, first, 'ClusterMeet', { peer: n });
    t.check('a node joins the cluster', r.ok, { node: n, error: r.error ?? null });
  }
  await t.until(async () => {
    const seen = await Promise.all(t.nodes.map((n) => nodesSeenBy(c, n)));
    return seen.every((rows) => rows !== undefined && rows.length === t.nodes.length && rows.every((x) => !x.flags.includes('handshake') && x.link === 'connected'));
  }, { timeoutMs: 20000, everyMs: 250, description: 'every node to know every other' });
  for (const [n, from, to] of masters) {
    const r = await call(c, n, 'ClusterAddSlotsRange', { from, to });
    t.check('a master takes its slots', r.ok, { node: n, from, to, error: r.error ?? null });
  }
  for (const [n, master] of Object.entries(replicas)) {
    const r = await t.until(async () => {
      const x = await call(c, n, 'ClusterReplicate', { nodeId: ids[master] });
      return x.ok ? x : undefined;
    }, { timeoutMs: 10000, everyMs: 250, description: `${n} to follow ${master}` });
    t.check('a replica follows its master', r.ok, { node: n, master });
  }
  await clusterOk(t, c, t.nodes, 20000);
  for (const [n, master] of Object.entries(replicas)) await caughtUp(t, c, master, [n], 20000);
  t.note('cluster formed', { ids, masters: masters.map(([n, from, to]) => ({ node: n, from, to })), replicas });
  return ids;
}

/** Waits until each of `viewers` says cluster_state:ok. */
export async function clusterOk(t, c, viewers, timeoutMs) {
  await t.until(async () => {
    const states = await Promise.all(viewers.map(async (n) => infoField((await call(c, n, 'ClusterInfo', {}, 1500)).data, 'cluster_state')));
    return states.every((s) => s === 'ok');
  }, { timeoutMs, everyMs: 250, description: `${viewers.join(', ')} to see the cluster as ok` });
}

/** Waits until each replica's link to `master` is up and it has processed the master's whole replication stream so far. */
export async function caughtUp(t, c, master, replicas, timeoutMs) {
  await t.until(async () => {
    const m = await role(c, master);
    if (m?.role !== 'master') return false;
    const rs = await Promise.all(replicas.map((n) => role(c, n)));
    return rs.every((r) => r?.role === 'slave' && r.link === 'connected' && r.offset >= m.offset);
  }, { timeoutMs, everyMs: 200, description: `${replicas.join(', ')} to catch up with ${master}` });
}

/** The node that masters `slot` as `viewer` sees it (a master not flagged as failing), by name; undefined when none. */
export async function masterOf(c, viewer, slot, ids) {
  const rows = await nodesSeenBy(c, viewer);
  const row = rows?.find((x) => x.flags.includes('master') && !x.flags.includes('fail') && !x.flags.includes('fail?') && x.slots.some(([a, b]) => slot >= a && slot <= b));
  return row === undefined ? undefined : Object.keys(ids).find((n) => ids[n] === row.id);
}

/** Writes key=value on `node`; { ok, error }. */
export async function set(c, node, key, value) {
  const r = await call(c, node, 'Set', { key, value }, 2000);
  return { ok: r.ok && r.data === 'OK', error: r.error };
}
