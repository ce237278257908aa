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

export const connect = (t, name) => connectWith(DkvClient, t, name);

export const brief = (s) => pick(s, ['id', 'generation', 'ring', 'live', 'unreachable', 'hints', 'keyCount', 'dataHash']);
