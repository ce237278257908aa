// What the raftkv scenarios need of the servers' JSON API: requests that never throw,
// each server's view of who leads, and writes retried until the leader takes them.

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
export const why = (r) => r.body?.error ?? (r.status === 200 ? undefined : `HTTP ${r.status}`);

/** A server's own status: { state, term, leader (a node name or undefined) }, or undefined when it does not answer. */
export async function status(c, addresses, node) {
  const r = await call(c, node, 'Status', {}, 2000);
  if (!ok(r)) return undefined;
  return { state: r.body.state, term: Number(r.body.term), leader: addresses.get(r.body.leader), applied: Number(r.body.applied_index) };
}

/** raft address → node name, from each server's own Status. */
export async function addresses(t, c) {
  const byAddress = new Map();
  for (const n of t.nodes) {
    const a = await t.until(async () => {
      const r = await call(c, n, 'Status', {}, 2000);
      return ok(r) && r.body.address ? r.body.address : undefined;
    }, { timeoutMs: 30000, everyMs: 200, description: `${n} to answer Status` });
    byAddress.set(a, n);
  }
  return byAddress;
}

/** Waits until every server of `nodes` names the same leader, one of `nodes` that says it leads, and gives it. */
export async function agreedLeader(t, c, addresses, nodes = t.nodes, timeoutMs = 30000) {
  return t.until(async () => {
    const seen = await Promise.all(nodes.map((n) => status(c, addresses, n)));
    const l = seen[0]?.leader;
    if (l === undefined || !nodes.includes(l) || !seen.every((s) => s?.leader === l)) return undefined;
    return seen[nodes.indexOf(l)]?.state === 'Leader' ? l : undefined;
  }, { timeoutMs, everyMs: 250, description: `servers ${nodes.join(', ')} to agree on a leader` });
}

/** Put, retried on the given servers in turn until one acknowledges it; the reply or the last failure. */
export async function put(t, c, nodes, key, value, timeoutMs = 20000) {
  const d = t.deadline(timeoutMs);
  let last;
  for (let i = 0; ; i++) {
    last = await call(c, nodes[i % nodes.length], 'Put', { key, value }, 8000);
    if (ok(last) || d.expired) return last;
    await t.sleep(200);
  }
}

/** A leader read on one server: { ok, value, error }; a server that does not lead refuses it. */
export async function get(c, node, key) {
  const r = await call(c, node, 'Get', { key }, 5000);
  return { ok: ok(r), value: r.body?.found ? r.body.value : undefined, error: why(r) };
}

/** One server's own applied value of `key` (undefined when it has none). */
export async function local(c, node, key) {
  const r = await call(c, node, 'LocalGet', { key }, 5000);
  return ok(r) && r.body?.found ? r.body.value : undefined;
}
