// What the etcd scenarios need of the v3 JSON gateway: base64 keys and values,
// requests that never throw, the members' ids, their leader, and reads and writes
// retried until a member answers them.

export const b64 = (s) => Buffer.from(String(s)).toString('base64');
export const unb64 = (s) => (s === undefined || s === null ? undefined : Buffer.from(String(s), 'base64').toString());

/** A request that never throws: { status, body }, status 0 when nothing answered. */
export async function call(c, node, type, body = {}, timeoutMs = 5000) {
  try {
    const r = await c.request(node, type, body, timeoutMs);
    return { status: r?.status ?? 0, body: r?.body ?? {} };
  } catch (err) {
    return { status: 0, body: { error: String(err?.message ?? err) } };
  }
}

export const ok = (r) => r.status === 200 && (r.body?.error === undefined || r.body?.error === null);

/** The error message of a reply, for a check's details. */
export const why = (r) => r.body?.error ?? r.body?.message ?? (r.status === 200 ? undefined : `HTTP ${r.status}`);

/** member id (decimal string) → node name, from each member's own Status. */
export async function memberIds(t, c) {
  const ids = new Map();
  for (const n of t.nodes) {
    const id = await t.until(async () => {
      const r = await call(c, n, 'Status', {}, 2000);
      return ok(r) ? String(r.body?.header?.member_id ?? '') || undefined : undefined;
    }, { timeoutMs: 30000, everyMs: 200, description: `${n} to answer Status` });
    ids.set(id, n);
  }
  return ids;
}

/** The leader `node` reports (a node name), or undefined. */
export async function leaderSeenBy(c, ids, node) {
  const r = await call(c, node, 'Status', {}, 2000);
  if (!ok(r)) return undefined;
  const l = String(r.body?.leader ?? '0');
  return l === '0' ? undefined : ids.get(l);
}

/** Waits until every member of `nodes` names the same leader, one of `nodes`, and gives it. */
export async function agreedLeader(t, c, ids, nodes = t.nodes, timeoutMs = 30000) {
  return t.until(async () => {
    const seen = await Promise.all(nodes.map((n) => leaderSeenBy(c, ids, n)));
    const l = seen[0];
    return l !== undefined && nodes.includes(l) && seen.every((s) => s === l) ? l : undefined;
  }, { timeoutMs, everyMs: 250, description: `members ${nodes.join(', ')} to agree on a leader` });
}

/** Put, retried on the given members in turn until one acknowledges it; the reply or the last failure. */
export async function put(t, c, nodes, key, value, timeoutMs = 20000) {
  const d = t.deadline(timeoutMs);
  let last;
  for (let i = 0; ; i++) {
    last = await call(c, nodes[i % nodes.length], 'Put', { key: b64(key), value: b64(value) }, 5000);
    if (ok(last) || d.expired) return last;
    await t.sleep(200);
  }
}

export async function del(t, c, nodes, key, timeoutMs = 20000) {
  const d = t.deadline(timeoutMs);
  let last;
  for (let i = 0; ; i++) {
    last = await call(c, nodes[i % nodes.length], 'DeleteRange', { key: b64(key) }, 5000);
    if (ok(last) || d.expired) return last;
    await t.sleep(200);
  }
}

/** A linearizable (or serializable) read of one key on one member: { ok, value, modRevision, revision, reply }. */
export async function get(c, node, key, { serializable = false, revision } = {}) {
  const body = { key: b64(key), ...(serializable && { serializable: true }), ...(revision !== undefined && { revision: String(revision) }) };
  const r = await call(c, node, revision !== undefined ? 'RangeAt' : 'Range', body, 5000);
  const kv = r.body?.kvs?.[0];
  return {
    ok: ok(r),
    value: unb64(kv?.value),
    modRevision: kv?.mod_revision === undefined ? undefined : Number(kv.mod_revision),
    revision: r.body?.header?.revision === undefined ? undefined : Number(r.body.header.revision),
    error: why(r),
  };
}

/** The revision a Put or DeleteRange reply carries. */
export const revisionOf = (r) => Number(r.body?.header?.revision ?? NaN);

/** Grants a lease of `ttl` seconds on one member: { ok, id (decimal string), error }. */
export async function grant(c, node, ttl) {
  const r = await call(c, node, 'LeaseGrant', { TTL: ttl }, 5000);
  return { ok: ok(r) && r.body?.ID !== undefined, id: r.body?.ID === undefined ? undefined : String(r.body.ID), error: why(r) };
}

/** A lease's remaining TTL in seconds as one member reports it: { ok, ttl, granted, error }; ttl is -1 once the lease is gone. */
export async function timeToLive(c, node, id) {
  const r = await call(c, node, 'LeaseTimeToLive', { ID: id }, 5000);
  return {
    ok: ok(r),
    ttl: r.body?.TTL === undefined ? undefined : Number(r.body.TTL),
    granted: r.body?.grantedTTL === undefined ? undefined : Number(r.body.grantedTTL),
    error: why(r),
  };
}

/** Stalls the current leader (SIGSTOP) until the others agree on another, then resumes it; the new leader. */
export async function stallLeader(t, c, ids, leader, timeoutMs = 30000) {
  const rest = t.nodes.filter((n) => n !== leader);
  await t.pause(leader);
  let next;
  try {
    next = await agreedLeader(t, c, ids, rest, timeoutMs);
  } finally {
    await t.resume(leader);
  }
  return agreedLeader(t, c, ids, t.nodes, timeoutMs).then((l) => l ?? next);
}

/**
 * timeToLive, asked again for up to `settleMs` while the reply is an error or more than
 * `most` seconds: right after a leader change a member may still answer from before it.
 */
export async function settledTimeToLive(t, c, node, id, most, settleMs = 3000) {
  const d = t.deadline(settleMs);
  for (;;) {
    const r = await timeToLive(c, node, id);
    if ((r.ok && r.ttl <= most) || d.expired) return r;
    await t.sleep(250);
  }
}
