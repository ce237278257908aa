// Client helpers shared by the ZabKV scenarios: finding the serving leader,
// writes that retry on connection loss, and reads from a chosen server after a
// Sync (like a ZooKeeper client calling sync() before getData()).

const RETRYABLE = new Set(['not serving', 'connection loss', 'timeout']);

/** Resolves `expired` after ms, on the scenario's clock (real or simulated). */
export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

export class ZkClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
    this.leader = null;
  }

  /** A raw request to one server; a timeout becomes { ok: false, error: 'timeout' }. */
  async send(node, type, body, timeoutMs = 1500) {
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

  async statusAll(nodes = this.t.nodes) {
    const live = new Set(this.running(nodes));
    return Promise.all(nodes.map(async (n) => (live.has(n) ? this.send(n, 'Status', {}, 1000) : { ok: false, id: n, error: 'down' })));
  }

  /** The serving leader (highest epoch), or null if none shows up in time. */
  async findLeader(timeoutMs = 10000, among = this.t.nodes) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const leaders = (await this.statusAll(among)).filter((s) => s.ok && s.state === 'LEADING' && s.serving);
      if (leaders.length > 0) {
        leaders.sort((a, b) => b.currentEpoch - a.currentEpoch);
        this.leader = leaders[0].id;
        return leaders[0];
      }
      if (d.expired) return null;
      await this.t.sleep(50);
    }
  }

  /** Waits until every given server is serving; returns their statuses (or null on timeout). */
  async waitServing(nodes, timeoutMs = 10000) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const s = await this.statusAll(nodes);
      if (s.every((x) => x.ok && x.serving)) return s;
      if (d.expired) return null;
      await this.t.sleep(50);
    }
  }

  /** A write sent to `node` (default: the leader), retried on connection loss until timeoutMs. */
  async write(type, body, { node = null, timeoutMs = 15000, tryMs = 1500 } = {}) {
    const d = deadline(this.t, timeoutMs);
    let last = { ok: false, error: 'no leader' };
    let attempts = 0;
    while (!d.expired) {
      const target = node ?? this.leader ?? (await this.findLeader(1000))?.id;
      if (!target) continue;
      const r = await this.send(target, type, body, tryMs);
      attempts++;
      // A create retried after a lost answer may find its own node.
      if (!r.ok && r.error === 'NODEEXISTS' && attempts > 1) return { ok: true, retried: true };
      if (r.ok || !RETRYABLE.has(r.error)) return r;
      last = r;
      if (!node) this.leader = null;
      await this.t.sleep(50);
    }
    return last;
  }

  create(path, data, opts) {
    return this.write('Create', { path, data }, opts);
  }

  setData(path, data, version = -1, opts) {
    return this.write('SetData', { path, data, version }, opts);
  }

  /** Sync then GetData on one server, retried while that server is not serving (up to timeoutMs). */
  async read(node, path, timeoutMs = 15000) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const s = await this.send(node, 'Sync', { path });
      const r = s.ok ? await this.send(node, 'GetData', { path }) : s;
      if (r.ok || !RETRYABLE.has(r.error) || d.expired) return r;
      await this.t.sleep(100);
    }
  }
}

export async function connect(t, name) {
  return new ZkClient(t, await t.client(name));
}

/** Waits until every running server is serving with the same last zxid and digest. */
export async function converge(t, zk, timeoutMs = 10000) {
  const d = deadline(t, timeoutMs);
  let states = [];
  for (;;) {
    const live = zk.running();
    states = await Promise.all(live.map((n) => t.state(n).catch(() => null)));
    const ok = states.every((s) => s && s.serving && s.outstanding === 0);
    if (ok && new Set(states.map((s) => s.lastZxid)).size === 1) return states;
    if (d.expired) return states.filter(Boolean);
    await t.sleep(100);
  }
}

export function brief(s) {
  if (!s) return null;
  const { id, state, serving, leader, currentEpoch, acceptedEpoch, lastZxid, lastLoggedZxid, snapshotZxid, digest, znodeCount } = s;
  return { id, state, serving, leader, currentEpoch, acceptedEpoch, lastZxid, lastLoggedZxid, snapshotZxid, digest, znodeCount };
}
