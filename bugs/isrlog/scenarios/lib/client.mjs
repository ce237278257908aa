// IsrLog over the shared scenario library: metadata from the controller, an acks=all
// producer that follows leader changes, a consumer reading up to the high watermark,
// and checks that the replicas' logs agree.
import { ScenarioClient, connectWith, pick, poll, retry, states } from '../../../lib/scenario-lib.mjs';

export const CONTROLLER = 'controller';

export class LogClient extends ScenarioClient {
  constructor(t, client) {
    super(t, client, { timeoutMs: 4000 });
    this.leader = null;
  }

  brokers() {
    return this.t.nodes.filter((n) => n !== CONTROLLER);
  }

  running(nodes = this.brokers()) {
    return super.running(nodes);
  }

  metadata() {
    return this.send(CONTROLLER, 'Metadata', {});
  }

  /** The leader per the controller, once that broker also says it leads; null on timeout. */
  async findLeader(timeoutMs = 15000, among = this.brokers()) {
    const confirmed = async () => {
      const m = await this.metadata();
      if (!m.ok || !m.leader || !among.includes(m.leader)) return null;
      const s = await this.send(m.leader, 'Status', {}, 1000);
      return s.ok && s.role === 'leader' && s.leaderEpoch === m.leaderEpoch ? { ...m, status: s } : null;
    };
    const r = await poll(this.t, confirmed, { timeoutMs, everyMs: 50 });
    if (!r.ok) return null;
    this.leader = r.value.leader;
    return r.value;
  }

  /** Waits until the controller's ISR is exactly `isr` (any order). */
  async waitIsr(isr, timeoutMs = 15000) {
    const exactly = (m) => m.ok && m.leader && m.isr.length === isr.length && isr.every((r) => m.isr.includes(r));
    const r = await poll(this.t, () => this.metadata(), { timeoutMs, everyMs: 50, done: exactly });
    return r.ok ? r.value : null;
  }

  /** acks=all produce, retried on leader changes until timeoutMs. */
  produce(key, value, { timeoutMs = 8000, tryMs = 2000 } = {}) {
    const attempt = async () => {
      if (!this.leader) {
        const m = await this.metadata();
        this.leader = m.ok ? m.leader : null;
        if (!this.leader) return { waitMs: 50 };
      }
      const r = await this.send(this.leader, 'Produce', { key, value }, tryMs);
      if (r.ok) return { done: r };
      this.leader = null;
      return { again: r };
    };
    return retry(this.t, attempt, { timeoutMs, none: { ok: false, error: 'no leader' } });
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

export const connect = (t, name) => connectWith(LogClient, t, name);

/** Waits until every running broker has the same log end offset and digest as the leader, with the high watermark at the end. */
export async function converge(t, lc, timeoutMs = 15000) {
  let live = [];
  const probe = async () => (await states(t, (live = lc.running()))).filter(Boolean);
  const settled = (ss) => {
    const leader = ss.find((s) => s.role === 'leader');
    return leader && ss.length === live.length && ss.every((s) => s.logEndOffset === leader.logEndOffset && s.highWatermark === leader.logEndOffset && s.digest === leader.digest);
  };
  return (await poll(t, probe, { timeoutMs, done: settled })).value;
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

export const brief = (s) => pick(s, ['id', 'role', 'leader', 'leaderEpoch', 'isr', 'logEndOffset', 'highWatermark', 'epochs', 'digest']);
