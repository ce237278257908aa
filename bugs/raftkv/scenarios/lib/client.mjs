// Client helpers shared by the RaftKV scenarios: leader discovery through
// Status, and requests that follow "not leader" answers to the leader.

const RETRYABLE = new Set(['not leader', 'leader changed', 'leader transferring']);

/** Resolves `expired` after ms, on the scenario's clock (real or simulated). */
export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

export function hex(id) {
  return Number(id).toString(16);
}

export class KvClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
    this.name = client.name;
    this.leader = null;
  }

  /** A raw request to one node; a timeout becomes { ok: false, error: 'timeout' }. */
  async send(node, type, body, timeoutMs = 2000) {
    try {
      return await this.c.request(node, type, body, timeoutMs);
    } catch (e) {
      return { ok: false, error: 'timeout', detail: String(e?.message ?? e) };
    }
  }

  async statusAll(nodes = this.t.nodes) {
    const live = new Set(this.t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id));
    return Promise.all(nodes.map(async (n) => (live.has(n) ? this.send(n, 'Status', {}, 1000) : { ok: false, id: n, error: 'down' })));
  }

  /** The node that reports itself leader at the highest term, or null if none shows up in time. */
  async findLeader(timeoutMs = 10000, among = this.t.nodes) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const leaders = (await this.statusAll(among)).filter((s) => s.ok && s.role === 'leader');
      if (leaders.length > 0) {
        leaders.sort((a, b) => b.term - a.term);
        this.leader = leaders[0].id;
        return leaders[0];
      }
      if (d.expired) return null;
      await this.t.sleep(100);
    }
  }

  /** Sends to the leader, following redirects and retrying until timeoutMs. */
  async request(type, body, { timeoutMs = 10000, tryMs = 2000 } = {}) {
    const d = deadline(this.t, timeoutMs);
    let last = { ok: false, error: 'no leader' };
    while (!d.expired) {
      if (!this.leader) {
        await this.findLeader(1000);
        if (!this.leader) continue;
      }
      const target = this.leader;
      const r = await this.send(target, type, body, tryMs);
      if (r.ok || (r.error !== 'timeout' && !RETRYABLE.has(r.error))) return r;
      last = r;
      this.leader = r.leader && r.leader !== target ? r.leader : null;
      await this.t.sleep(50);
    }
    return last;
  }

  async put(key, value, extra = {}) {
    return this.request('Put', { key, value, ...extra });
  }

  async get(key) {
    return this.request('Get', { key });
  }
}

export async function connect(t, name) {
  return new KvClient(t, await t.client(name));
}

/** Waits until every running member has applied the same index and reports the same kvHash. */
export async function converge(t, kv, timeoutMs = 15000) {
  const d = deadline(t, timeoutMs);
  let states = [];
  for (;;) {
    const live = t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id);
    states = await Promise.all(live.map((n) => t.state(n).catch(() => null)));
    const ok = states.every(Boolean);
    const applied = ok ? new Set(states.map((s) => s.appliedIndex)) : null;
    const commits = ok ? Math.max(...states.map((s) => s.commitIndex)) : 0;
    if (ok && applied.size === 1 && states[0].appliedIndex === commits) return states;
    if (d.expired) return states.filter(Boolean);
    // Reads go through the log: one carries the leader's commit index to everyone.
    await kv.request('Get', { key: '__converge' }, { timeoutMs: 2000 });
    await t.sleep(200);
  }
}

export function brief(s) {
  if (!s) return null;
  const { id, role, term, commitIndex, appliedIndex, consistentIndex, lastLog, revision, kvHash, keyCount } = s;
  return { id, role, term, commitIndex, appliedIndex, consistentIndex, lastLog, revision, kvHash, keyCount };
}
