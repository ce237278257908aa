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

  /** AlterPartitionReassignments: the partition's replicas become `replicas`; retried while the controller has no eligible leader. */
  async reassign(replicas, timeoutMs = 5000) {
    const r = await poll(this.t, () => this.send(CONTROLLER, 'AlterPartitionReassignments', { replicas }), { timeoutMs, everyMs: 100, done: (res) => res.ok || res.error === 'INVALID_REPLICA_ASSIGNMENT' });
    return r.value;
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

  /** A transactional produce (acks=all) from `producer` ({ transactionalId, producerId, producerEpoch }), retried on leader changes. */
  produceTxn(producer, key, value, { timeoutMs = 8000, tryMs = 2000 } = {}) {
    const attempt = async () => {
      if (!this.leader) {
        const m = await this.metadata();
        this.leader = m.ok ? m.leader : null;
        if (!this.leader) return { waitMs: 50 };
      }
      const r = await this.send(this.leader, 'Produce', { key, value, ...producer }, tryMs);
      if (r.ok) return { done: r };
      if (r.error !== 'NOT_LEADER_FOR_PARTITION' && r.error !== 'timeout') return { done: r };
      this.leader = null;
      return { again: r };
    };
    return retry(this.t, attempt, { timeoutMs, none: { ok: false, error: 'no leader' } });
  }

  /** Every committed record, read from the leader with read_committed: control records and aborted transactions left out. */
  async consumeCommitted(node = this.leader) {
    const records = [];
    const aborted = [];
    let offset = 0;
    for (;;) {
      const r = await this.send(node, 'Fetch', { offset, isolationLevel: 'read_committed' });
      if (!r.ok) return { ok: false, error: r.error, records: [] };
      aborted.push(...r.abortedTransactions);
      if (r.records.length === 0) {
        const isAborted = (rec) => aborted.some((a) => a.producerId === rec.producerId && a.firstOffset <= rec.offset && rec.offset < a.lastOffset);
        const visible = records.filter((rec) => !rec.control && !isAborted(rec));
        return { ok: true, records: visible, lastStableOffset: r.lastStableOffset, highWatermark: r.highWatermark };
      }
      records.push(...r.records);
      offset = records[records.length - 1].offset + 1;
    }
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

/**
 * A transactional producer over a LogClient: InitProducerId, then per transaction
 * AddPartitionsToTxn, produces and EndTxn, each retried while the coordinator answers
 * CONCURRENT_TRANSACTIONS.
 */
export class TxnProducer {
  constructor(lc, transactionalId) {
    this.lc = lc;
    this.t = lc.t;
    this.transactionalId = transactionalId;
    this.producerId = null;
    this.producerEpoch = null;
  }

  get id() {
    return { transactionalId: this.transactionalId, producerId: this.producerId, producerEpoch: this.producerEpoch };
  }

  async coordinator(type, body, timeoutMs = 8000) {
    const r = await poll(this.t, () => this.lc.send(CONTROLLER, type, body, 1000), { timeoutMs, everyMs: 50, done: (res) => res.ok || (res.error !== 'CONCURRENT_TRANSACTIONS' && res.error !== 'timeout') });
    return r.value;
  }

  async init() {
    const r = await this.coordinator('InitProducerId', { transactionalId: this.transactionalId });
    if (r.ok) Object.assign(this, { producerId: r.producerId, producerEpoch: r.producerEpoch });
    return r;
  }

  begin() {
    return this.coordinator('AddPartitionsToTxn', { ...this.id, partitions: ['events-0'] });
  }

  produce(key, value, opts) {
    return this.lc.produceTxn(this.id, key, value, opts);
  }

  end(commit) {
    return this.coordinator('EndTxn', { ...this.id, commit });
  }
}

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
