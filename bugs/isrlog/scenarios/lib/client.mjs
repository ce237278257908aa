// Client helpers shared by the IsrLog scenarios: metadata from the controller,
// an acks=all producer that follows leader changes, a consumer reading up to
// the high watermark, and checks that the replicas' logs agree.

/** Resolves `expired` after ms, on the scenario's clock (real or simulated). */
export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

export const CONTROLLER = 'controller';

export class LogClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
    this.leader = null;
  }

  async send(node, type, body, timeoutMs = 4000) {
    try {
      return await this.c.request(node, type, body, timeoutMs);
    } catch (e) {
      return { ok: false, error: 'timeout', detail: String(e?.message ?? e) };
    }
  }

  brokers() {
    return this.t.nodes.filter((n) => n !== CONTROLLER);
  }

  running(nodes = this.brokers()) {
    const live = new Set(this.t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id));
    return nodes.filter((n) => live.has(n));
  }

  metadata() {
    return this.send(CONTROLLER, 'Metadata', {});
  }

  /** The leader per the controller, once that broker also says it leads; null on timeout. */
  async findLeader(timeoutMs = 15000, among = this.brokers()) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const m = await this.metadata();
      if (m.ok && m.leader && among.includes(m.leader)) {
        const s = await this.send(m.leader, 'Status', {}, 1000);
        if (s.ok && s.role === 'leader' && s.leaderEpoch === m.leaderEpoch) {
          this.leader = m.leader;
          return { ...m, status: s };
        }
      }
      if (d.expired) return null;
      await this.t.sleep(50);
    }
  }

  /** Waits until the controller's ISR is exactly `isr` (any order). */
  async waitIsr(isr, timeoutMs = 15000) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const m = await this.metadata();
      if (m.ok && m.leader && m.isr.length === isr.length && isr.every((r) => m.isr.includes(r))) return m;
      if (d.expired) return null;
      await this.t.sleep(50);
    }
  }

  /** acks=all produce, retried on leader changes until timeoutMs. */
  async produce(key, value, { timeoutMs = 8000, tryMs = 2000 } = {}) {
    const d = deadline(this.t, timeoutMs);
    let last = { ok: false, error: 'no leader' };
    while (!d.expired) {
      if (!this.leader) {
        const m = await this.metadata();
        this.leader = m.ok ? m.leader : null;
        if (!this.leader) {
          await this.t.sleep(50);
          continue;
        }
      }
      const r = await this.send(this.leader, 'Produce', { key, value }, tryMs);
      if (r.ok) return r;
      last = r;
      this.leader = null;
      await this.t.sleep(50);
    }
    return last;
  }

  /** Every record up to the high watermark, read from the leader. */
  async consumeAll(node = this.leader) {
    const out = [];
    for (;;) {
      const r = await this.send(node, 'Fetch', { offset: out.length });
      if (!r.ok) return { ok: false, error: r.error, records: out };
      if (r.records.length === 0) return { ok: true, records: out, highWatermark: r.highWatermark };
      out.push(...r.records);
    }
  }
}

export async function connect(t, name) {
  return new LogClient(t, await t.client(name));
}

/** Waits until every running broker has the same log end offset and digest as the leader, with the high watermark at the end. */
export async function converge(t, lc, timeoutMs = 15000) {
  const d = deadline(t, timeoutMs);
  let states = [];
  for (;;) {
    const live = lc.running();
    states = (await Promise.all(live.map((n) => t.state(n).catch(() => null)))).filter(Boolean);
    const leader = states.find((s) => s.role === 'leader');
    if (
      leader &&
      states.length === live.length &&
      states.every((s) => s.logEndOffset === leader.logEndOffset && s.highWatermark === leader.logEndOffset && s.digest === leader.digest)
    )
      return states;
    if (d.expired) return states;
    await t.sleep(100);
  }
}

/** Offsets at which two replicas' logs disagree (the first few). */
export function divergence(a, b) {
  const out = [];
  const n = Math.min(a.records?.length ?? 0, b.records?.length ?? 0);
  for (let i = 0; i < n && out.length < 5; i++) {
    const [, ea, ka, va] = a.records[i];
    const [, eb, kb, vb] = b.records[i];
    if (ea !== eb || ka !== kb || va !== vb) out.push({ offset: i, [a.id]: a.records[i], [b.id]: b.records[i] });
  }
  return out;
}

export function brief(s) {
  if (!s) return null;
  const { id, role, leader, leaderEpoch, isr, logEndOffset, highWatermark, epochs, digest } = s;
  return { id, role, leader, leaderEpoch, isr, logEndOffset, highWatermark, epochs, digest };
}
