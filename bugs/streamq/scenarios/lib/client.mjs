// Client helpers for the StreamQ scenarios: leader discovery through Status,
// publishes with a Nats-Msg-Id (so a retry is stored once), and requests that
// follow "not leader" answers to the leader.

const RETRYABLE = new Set(['not leader', 'leader changed', 'timeout']);

/** `expired` turns true after ms on the scenario's clock (real or simulated). */
export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

export class StreamClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
    this.leader = null;
  }

  async send(node, type, body, timeoutMs = 1500) {
    try {
      return await this.c.request(node, type, body, timeoutMs);
    } catch (e) {
      return { ok: false, error: 'timeout', detail: String(e?.message ?? e) };
    }
  }

  running() {
    return new Set(this.t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id));
  }

  async findLeader(timeoutMs = 10000, among = this.t.nodes) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const live = this.running();
      const all = await Promise.all(among.map((n) => (live.has(n) ? this.send(n, 'Status', {}, 800) : { ok: false })));
      const leaders = all.filter((s) => s.ok && s.role === 'LEADER').sort((a, b) => b.term - a.term);
      if (leaders.length > 0) {
        this.leader = leaders[0].id;
        return leaders[0];
      }
      if (d.expired) return null;
      await this.t.sleep(100);
    }
  }

  async request(type, body, { timeoutMs = 30000, tryMs = 3000 } = {}) {
    const d = deadline(this.t, timeoutMs);
    let last = { ok: false, error: 'no leader' };
    while (!d.expired) {
      if (!this.leader) {
        await this.findLeader(1000);
        if (!this.leader) continue;
      }
      const target = this.leader;
      const r = await this.send(target, type, body, tryMs);
      if (r.ok || !RETRYABLE.has(r.error)) return r;
      last = r;
      this.leader = r.leader && r.leader !== target ? r.leader : null;
      await this.t.sleep(50);
    }
    return last;
  }

  publish(subject, data, msgId, opts) {
    return this.request('Publish', { subject, data, msgId }, opts);
  }
}

export async function connect(t, name) {
  return new StreamClient(t, await t.client(name));
}

/** Waits until every running member has applied the same index and holds the same stream. */
export async function converge(t, sc, timeoutMs = 10000) {
  const d = deadline(t, timeoutMs);
  let states = [];
  for (;;) {
    const live = t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id);
    states = await Promise.all(live.map((n) => t.state(n).catch(() => null)));
    const ok = states.every(Boolean);
    if (ok && new Set(states.map((s) => s.applied)).size === 1 && new Set(states.map((s) => s.stream.hash)).size === 1 && states[0].applied === Math.max(...states.map((s) => s.commit))) return states;
    if (d.expired) return states.filter(Boolean);
    await t.sleep(150);
  }
}

export function brief(s) {
  if (!s) return null;
  const { id, role, term, leader, commit, applied, pindex, pterm, stream } = s;
  return { id, role, term, leader, commit, applied, pindex, pterm, lastSeq: stream?.lastSeq ?? null, hash: stream?.hash ?? null };
}

/** Acknowledged msgIds missing from a member's stream, and msgIds it holds that were never acknowledged nor attempted. */
export function missingAcked(state, acked) {
  const have = new Set(state.msgIds ?? []);
  return acked.filter((id) => !have.has(id));
}
