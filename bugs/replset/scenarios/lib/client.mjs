// Client helpers shared by the ReplSet scenarios: primary discovery through
// isMaster, writes that follow NotWritablePrimary answers, reads with a read
// concern from a chosen member, and waiting for the members to converge.

/** Resolves `expired` after ms, on the scenario's clock (real or simulated). */
export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

export class MongoClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
    this.primary = null;
  }

  /** A raw command to one member; a timeout becomes { ok: false, error: 'timeout' }. */
  async send(node, type, body, timeoutMs = 2000) {
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

  /** The member that reports itself primary at the highest term, or null. */
  async findPrimary(timeoutMs = 10000, among = this.t.nodes) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const rs = await Promise.all(this.running(among).map((n) => this.send(n, 'isMaster', {}, 500)));
      const primaries = rs.filter((r) => r.ok && r.ismaster).sort((a, b) => b.term - a.term);
      if (primaries.length > 0) {
        this.primary = primaries[0].me;
        return primaries[0];
      }
      if (d.expired) return null;
      await this.t.sleep(100);
    }
  }

  /** insert through the primary, following NotWritablePrimary until timeoutMs. */
  async insert(_id, v, writeConcern = { w: 'majority' }, { timeoutMs = 8000 } = {}) {
    const d = deadline(this.t, timeoutMs);
    let last = { ok: false, error: 'no primary' };
    while (!d.expired) {
      if (!this.primary) {
        await this.findPrimary(1000);
        if (!this.primary) continue;
      }
      const target = this.primary;
      const r = await this.send(target, 'insert', { _id, v, writeConcern }, (writeConcern.wtimeout ?? 5000) + 1000);
      if (r.ok || (r.error !== 'timeout' && r.error !== 'NotWritablePrimary')) return r;
      last = r;
      this.primary = r.primary && r.primary !== target ? r.primary : null;
      await this.t.sleep(50);
    }
    return last;
  }

  async find(node, _id, readConcern = 'local') {
    return this.send(node, 'find', { _id, readConcern }, 1000);
  }
}

export async function connect(t, name) {
  return new MongoClient(t, await t.client(name));
}

/** Waits until every running member reports the same last applied optime and commit point. */
export async function converge(t, timeoutMs = 8000) {
  const d = deadline(t, timeoutMs);
  let states = [];
  for (;;) {
    const live = t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id);
    states = (await Promise.all(live.map((n) => t.state(n).catch(() => null)))).filter(Boolean);
    const key = (s) => `${s.lastApplied.t}:${s.lastApplied.ts}`;
    if (states.length === live.length && new Set(states.map(key)).size === 1 && states.some((s) => s.state === 'PRIMARY')) {
      const cp = new Set(states.map((s) => `${s.lastCommittedOpTime.t}:${s.lastCommittedOpTime.ts}`));
      if (cp.size === 1 && key(states[0]) === [...cp][0]) return { ok: true, states };
    }
    if (d.expired) return { ok: false, states };
    await t.sleep(100);
  }
}

export function brief(s) {
  if (!s) return null;
  const { id, state, term, primary, lastApplied, lastCommittedOpTime, oplogLength, syncSource, rbid, docCount } = s;
  return { id, state, term, primary, lastApplied, lastCommittedOpTime, oplogLength, syncSource, rbid, docCount };
}
