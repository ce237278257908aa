// ShardSearch over the shared scenario library: cluster health from any node, index
// and get through a chosen coordinating node, and waiting for a healthy cluster.
import { ScenarioClient, connectWith, poll, retry } from '../../../lib/scenario-lib.mjs';

export class EsClient extends ScenarioClient {
  constructor(t, client) {
    super(t, client, { timeoutMs: 2500 });
  }

  async health(node) {
    return this.send(node, 'health', {}, 2000);
  }

  /**
   * Waits until one node is master, is known as master by every node in `among`, lists
   * at least `minNodes` nodes, (if `status` is given) reports that status, and satisfies `where`.
   */
  async waitForCluster({ among = this.t.nodes, minNodes = 3, status = null, where = () => true, timeoutMs = 10000 } = {}) {
    const look = async () => {
      const hs = await Promise.all(this.running(among).map((n) => this.health(n)));
      const masters = new Set(hs.map((h) => (h.ok ? h.master : null)));
      const m = hs.find((h) => h.ok && h.node === h.master);
      const agreed = m && masters.size === 1 && !masters.has(null) && m.nodes.length >= minNodes && (!status || m.status === status) && where(m);
      return { hs, master: agreed ? m : null };
    };
    const r = await poll(this.t, look, { timeoutMs, everyMs: 200, done: (v) => v.master });
    return r.ok ? r.value.master : { ok: false, timedOut: true, health: r.value.hs };
  }

  /** Indexes through `node` (or any running node in turn), retrying on blocks and timeouts until timeoutMs. */
  index(id, doc, { via = null, timeoutMs = 6000 } = {}) {
    let i = 0;
    const attempt = async () => {
      const nodes = via ? [via] : this.running();
      const r = await this.send(nodes[i++ % nodes.length], 'index', { id, doc });
      return r.ok ? { done: r } : { again: r };
    };
    return retry(this.t, attempt, { timeoutMs, everyMs: 100, none: { ok: false, error: 'not sent' } });
  }

  async get(id, via) {
    return this.send(via, 'get', { id });
  }

  /** Asks `node` to shut down gracefully (it closes its services and goes quiet until restarted). */
  async shutdown(node) {
    return this.send(node, 'shutdown', {}, 2000);
  }
}

export const connect = (t, name) => connectWith(EsClient, t, name);
