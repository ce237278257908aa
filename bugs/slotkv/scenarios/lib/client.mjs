// SlotKV over the shared scenario library: a cluster-aware client that keeps a slot
// map, sends each key to the master of its slot and follows MOVED redirects, plus
// cluster-wide waits.
import { ScenarioClient, connectWith, poll, retry } from '../../../lib/scenario-lib.mjs';
import { SLOTS, keyHashSlot } from '../../src/db.js';

export { SLOTS, keyHashSlot };

export class ClusterClient extends ScenarioClient {
  constructor(t, client) {
    super(t, client, { timeoutMs: 1500 });
    this.slots = new Array(SLOTS).fill(null);
  }

  async refresh() {
    for (const n of this.running()) {
      const r = await this.send(n, 'ClusterSlots', {}, 1000);
      if (r.ok) {
        this.slots = r.slots;
        return;
      }
    }
  }

  /** A keyed command to the slot's master, following MOVED, retried until timeoutMs. */
  cmd(type, body, timeoutMs = 8000) {
    const slot = keyHashSlot(String(body.key));
    const attempt = async () => {
      const owner = this.slots[slot];
      if (!owner) {
        await this.refresh();
        return this.slots[slot] ? undefined : { waitMs: 100 };
      }
      const r = await this.send(owner, type, body);
      if (r.ok) return { done: r };
      if (r.error === 'MOVED' && r.owner && r.owner !== owner) this.slots[slot] = r.owner;
      else {
        await this.t.sleep(100);
        await this.refresh();
      }
      return { again: r, waitMs: 0 };
    };
    return retry(this.t, attempt, { timeoutMs, none: { ok: false, error: 'no owner' } });
  }

  set(key, value, px) {
    return this.cmd('Set', px ? { key, value, px } : { key, value });
  }

  get(key) {
    return this.cmd('Get', { key });
  }

  /** SETs grouped by the master of each key's slot, one pipeline per master. */
  async pipelineSet(entries) {
    await this.refresh();
    const byOwner = new Map();
    for (const e of entries) {
      const owner = this.slots[keyHashSlot(e.key)];
      if (!byOwner.has(owner)) byOwner.set(owner, []);
      byOwner.get(owner).push(e);
    }
    const out = [];
    // Generous: a pipeline of hundreds of keys can take seconds to cross a loaded machine's containers.
    for (const [owner, cmds] of byOwner) out.push(await this.send(owner, 'Pipeline', { cmds }, 15000));
    return out.every((r) => r.ok && r.results.every((x) => x.ok));
  }

  async infos(nodes = this.running()) {
    const out = {};
    for (const n of nodes) out[n] = await this.send(n, 'Info', {}, 1000);
    return out;
  }

  /**
   * Waits until every live node reports the cluster ok, the same slot owners, and a bus
   * link to every other live node (failure detection only watches linked nodes).
   */
  async waitForStable(timeoutMs = 10000) {
    const agreedSlots = async () => {
      const views = [];
      let ok = true;
      const live = this.running();
      for (const n of live) {
        const info = await this.send(n, 'Info', {}, 1000);
        const slots = await this.send(n, 'ClusterSlots', {}, 1000);
        const linked = info.ok && live.every((o) => o === n || info.linked.includes(o));
        if (!info.ok || !slots.ok || info.clusterState !== 'ok' || !linked) ok = false;
        else views.push(JSON.stringify(slots.slots));
      }
      return ok && new Set(views).size === 1 ? views[0] : null;
    };
    const r = await poll(this.t, agreedSlots, { timeoutMs, everyMs: 150 });
    if (r.ok) this.slots = JSON.parse(r.value);
    return r.ok;
  }

  /** Which of `nodes` list `id` in their node table (CLUSTER NODES); a node that does not answer counts as knowing it. */
  async knownBy(id, nodes) {
    const out = [];
    for (const n of nodes) {
      const r = await this.send(n, 'ClusterNodes', {}, 1000);
      if (!r.ok || r.nodes.some((x) => x.id === id)) out.push(n);
    }
    return out;
  }

  /** Waits until each listed replica reports the same offset as its master. */
  async waitForReplicas(replicas, timeoutMs = 8000) {
    const synced = (infos) =>
      replicas.every((r) => {
        const i = infos[r];
        const m = i?.ok && infos[i.master];
        return i?.ok && i.role === 'replica' && i.replState === 'CONNECTED' && m?.ok && m.offset === i.offset;
      });
    const r = await poll(this.t, () => this.infos(), { timeoutMs, done: synced });
    return r.ok ? r.value : null;
  }
}

export async function connect(t, name) {
  const c = await connectWith(ClusterClient, t, name);
  await c.refresh();
  return c;
}
