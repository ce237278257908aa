// Client helpers shared by the SlotKV scenarios: a cluster-aware client that
// keeps a slot map, sends each key to the master of its slot and follows
// MOVED redirects, plus cluster-wide waits.

export const SLOTS = 16;

/** The same slot function as the server (db.js keyHashSlot). */
export function keyHashSlot(key) {
  const s = key.indexOf('{');
  const e = s >= 0 ? key.indexOf('}', s + 1) : -1;
  const part = e > s + 1 ? key.slice(s + 1, e) : key;
  let h = 0;
  for (let i = 0; i < part.length; i++) h = (h * 31 + part.charCodeAt(i)) >>> 0;
  return h % SLOTS;
}

/** Resolves `expired` after ms, on the scenario's clock (real or simulated). */
export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

export class ClusterClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
    this.slots = new Array(SLOTS).fill(null);
  }

  live() {
    return this.t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id);
  }

  async send(node, type, body = {}, timeoutMs = 1500) {
    try {
      return await this.c.request(node, type, body, timeoutMs);
    } catch (e) {
      return { ok: false, error: 'timeout', detail: String(e?.message ?? e) };
    }
  }

  async refresh() {
    for (const n of this.live()) {
      const r = await this.send(n, 'ClusterSlots', {}, 1000);
      if (r.ok) {
        this.slots = r.slots;
        return;
      }
    }
  }

  /** A keyed command to the slot's master, following MOVED, retried until timeoutMs. */
  async cmd(type, body, timeoutMs = 8000) {
    const slot = keyHashSlot(String(body.key));
    const d = deadline(this.t, timeoutMs);
    let last = { ok: false, error: 'no owner' };
    while (!d.expired) {
      const owner = this.slots[slot];
      if (!owner) {
        await this.refresh();
        if (!this.slots[slot]) await this.t.sleep(100);
        continue;
      }
      const r = await this.send(owner, type, body);
      if (r.ok) return r;
      last = r;
      if (r.error === 'MOVED' && r.owner && r.owner !== owner) this.slots[slot] = r.owner;
      else {
        await this.t.sleep(100);
        await this.refresh();
      }
    }
    return last;
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

  async infos(nodes = this.live()) {
    const out = {};
    for (const n of nodes) out[n] = await this.send(n, 'Info', {}, 1000);
    return out;
  }

  /**
   * Waits until every live node reports the cluster ok, the same slot owners, and a bus
   * link to every other live node (failure detection only watches linked nodes).
   */
  async waitForStable(timeoutMs = 10000) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const views = [];
      let ok = true;
      const live = this.live();
      for (const n of live) {
        const info = await this.send(n, 'Info', {}, 1000);
        const slots = await this.send(n, 'ClusterSlots', {}, 1000);
        const linked = info.ok && live.every((o) => o === n || info.linked.includes(o));
        if (!info.ok || !slots.ok || info.clusterState !== 'ok' || !linked) ok = false;
        else views.push(JSON.stringify(slots.slots));
      }
      if (ok && new Set(views).size === 1) {
        this.slots = JSON.parse(views[0]);
        return true;
      }
      if (d.expired) return false;
      await this.t.sleep(150);
    }
  }

  /** Waits until each listed replica reports the same offset as its master. */
  async waitForReplicas(replicas, timeoutMs = 8000) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const infos = await this.infos();
      const synced = replicas.every((r) => {
        const i = infos[r];
        const m = i?.ok && infos[i.master];
        return i?.ok && i.role === 'replica' && i.replState === 'CONNECTED' && m?.ok && m.offset === i.offset;
      });
      if (synced) return infos;
      if (d.expired) return null;
      await this.t.sleep(100);
    }
  }
}

export async function connect(t, name) {
  const c = new ClusterClient(t, await t.client(name));
  await c.refresh();
  return c;
}
