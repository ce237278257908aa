// Client helpers shared by the ShardSearch scenarios: cluster health from any
// node, index and get through a chosen coordinating node, and waiting for a
// healthy cluster.

/** Resolves `expired` after ms, on the scenario's clock (real or simulated). */
export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

export class EsClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
  }

  async send(node, type, body, timeoutMs = 2500) {
    try {
      return await this.c.request(node, type, body, timeoutMs);
    } catch (e) {
      return { ok: false, error: 'timeout', detail: String(e?.message ?? e) };
    }
  }

  running(nodes = this.t.nodes) {
    const live = new Set(this.t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id));
    return nodes.filter((n) => live.has(n));
  }

  async health(node) {
    return this.send(node, 'health', {}, 2000);
  }

  /**
   * Waits until one node is master, is known as master by every node in `among`, lists
   * at least `minNodes` nodes, (if `status` is given) reports that status, and satisfies `where`.
   */
  async waitForCluster({ among = this.t.nodes, minNodes = 3, status = null, where = () => true, timeoutMs = 10000 } = {}) {
    const d = deadline(this.t, timeoutMs);
    let hs = [];
    for (;;) {
      hs = await Promise.all(this.running(among).map((n) => this.health(n)));
      const masters = new Set(hs.map((h) => (h.ok ? h.master : null)));
      const m = hs.find((h) => h.ok && h.node === h.master);
      if (m && masters.size === 1 && !masters.has(null) && m.nodes.length >= minNodes && (!status || m.status === status) && where(m)) return m;
      if (d.expired) return { ok: false, timedOut: true, health: hs };
      await this.t.sleep(200);
    }
  }

  /** Indexes through `node` (or any running node in turn), retrying on blocks and timeouts until timeoutMs. */
  async index(id, doc, { via = null, timeoutMs = 6000 } = {}) {
    const d = deadline(this.t, timeoutMs);
    let last = { ok: false, error: 'not sent' };
    let i = 0;
    while (!d.expired) {
      const nodes = via ? [via] : this.running();
      const r = await this.send(nodes[i++ % nodes.length], 'index', { id, doc });
      if (r.ok) return r;
      last = r;
      await this.t.sleep(100);
    }
    return last;
  }

  async get(id, via) {
    return this.send(via, 'get', { id });
  }
}

export async function connect(t, name) {
  return new EsClient(t, await t.client(name));
}
