// Client helpers shared by the DynaKV scenarios: requests to a chosen
// coordinator, and waiting for every node's view of the ring and of liveness.

/** Resolves `expired` after ms, on the scenario's clock (real or simulated). */
export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

export class DkvClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
  }

  /** A raw request to one node; a timeout becomes { ok: false, error: 'timeout' }. */
  async send(node, type, body, timeoutMs = 3000) {
    try {
      return await this.c.request(node, type, body, timeoutMs);
    } catch (e) {
      return { ok: false, error: 'client timeout', detail: String(e?.message ?? e) };
    }
  }

  put(node, key, value, cl = 'QUORUM') {
    return this.send(node, 'Put', { key, value, cl });
  }

  get(node, key, cl = 'QUORUM') {
    return this.send(node, 'Get', { key, cl });
  }

  status(node) {
    return this.send(node, 'Status', {}, 1000);
  }

  /**
   * Waits until every node in `nodes` sees exactly `live` as its live set (and, if given, `ring`
   * as the ring). Returns the last statuses and whether the wait succeeded.
   */
  async waitViews(nodes, { live, ring, timeoutMs = 10000 }) {
    const d = deadline(this.t, timeoutMs);
    const want = [...live].sort().join(',');
    const wantRing = ring ? [...ring].sort().join(',') : null;
    let statuses = [];
    for (;;) {
      statuses = await Promise.all(nodes.map((n) => this.status(n)));
      const ok = statuses.every((s) => s.ok && s.live.join(',') === want && (wantRing === null || s.ring.join(',') === wantRing));
      if (ok) return { ok: true, statuses };
      if (d.expired) return { ok: false, statuses };
      await this.t.sleep(100);
    }
  }
}

export async function connect(t, name) {
  return new DkvClient(t, await t.client(name));
}

export function brief(s) {
  if (!s) return null;
  const { id, generation, ring, live, unreachable, hints, keyCount, dataHash } = s;
  return { id, generation, ring, live, unreachable, hints, keyCount, dataHash };
}
