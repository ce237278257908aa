// RangeKV over the shared scenario library: a range cache filled from Status, requests
// routed to a range's leaseholder (following NotLeaseHolderError), and a transaction
// runner that retries on TransactionRetryError.
import { ScenarioClient, connectWith, poll, retry, running, states } from '../../../lib/scenario-lib.mjs';

/** The ranges, as the stores define them. */
export const RANGES = [
  { rangeId: 1, start: '', end: 'm' },
  { rangeId: 2, start: 'm', end: '\uffff' },
];
export const rangeOf = (key) => RANGES.find((r) => r.start <= key && key < r.end).rangeId;

const RETRYABLE = new Set(['NotLeaseHolderError', 'RangeKeyMismatchError', 'timeout']);

export class KvClient extends ScenarioClient {
  constructor(t, client) {
    super(t, client, { timeoutMs: 1500 });
    /** @type {Map<number, string>} the leaseholder this client believes each range has */
    this.leaseholders = new Map();
  }

  /** The store whose replica of rangeId holds a valid lease, or null if none shows up in time. */
  async findLeaseholder(rangeId, timeoutMs = 45000, among = this.t.nodes) {
    const rangeIn = (s) => s.ranges.find((r) => r.rangeId === rangeId);
    const holderIn = (all) => all.filter((s) => s.ok && rangeIn(s)?.leaseValid).sort((a, b) => rangeIn(b).term - rangeIn(a).term)[0];
    const r = await poll(this.t, async () => holderIn(await this.statusAll(among, { timeoutMs: 800 })), { timeoutMs });
    if (!r.ok) return null;
    this.leaseholders.set(rangeId, r.value.id);
    return r.value.id;
  }

  /** Sends a request for rangeId to its leaseholder, following redirects until timeoutMs. */
  toRange(rangeId, type, body, { timeoutMs = 20000, tryMs = 5000 } = {}) {
    const attempt = async () => {
      const target = this.leaseholders.get(rangeId) ?? (await this.findLeaseholder(rangeId, 1000));
      if (!target) return undefined;
      const r = await this.send(target, type, body, tryMs);
      if (r.ok || !RETRYABLE.has(r.error)) return { done: r };
      if (r.leader && r.leader !== target) this.leaseholders.set(rangeId, r.leader);
      else this.leaseholders.delete(rangeId);
      return { again: r };
    };
    return retry(this.t, attempt, { timeoutMs, none: { ok: false, error: 'no leaseholder' } });
  }

  put(key, value, opts) {
    return this.toRange(rangeOf(key), 'Put', { key, value }, opts);
  }

  get(key, opts) {
    return this.toRange(rangeOf(key), 'Get', { key }, opts);
  }

  /**
   * Runs a transaction begun on `gateway`: fn(txn, scan) returns the writes; it is retried
   * from TxnBegin on TransactionRetryError. Returns { ok, attempts, commitTs, result }.
   */
  async runTxn(gateway, fn, { attempts = 20 } = {}) {
    let last = null;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const b = await this.send(gateway, 'TxnBegin', {});
      if (!b.ok) {
        last = b;
        await this.t.sleep(100);
        continue;
      }
      const txn = b.txn;
      const reads = [];
      const scan = async (start, end) => {
        reads.push([start, end]);
        const r = await this.toRange(rangeOf(start), 'Scan', { txn, start, end });
        if (!r.ok) throw Object.assign(new Error('scan failed'), { reply: r });
        return r.rows;
      };
      let out;
      try {
        out = await fn(txn, scan);
      } catch (e) {
        last = e.reply ?? { ok: false, error: String(e) };
        continue;
      }
      const r = await this.toRange(rangeOf(out.writes[0].key), 'EndTxn', { txn, reads, writes: out.writes });
      if (r.ok) return { ok: true, attempts: attempt, txn: txn.id, commitTs: r.commitTs, result: out.result };
      last = r;
      await this.t.sleep(Math.floor(this.t.random() * 120));
    }
    return { ok: false, attempts, last };
  }
}

export const connect = (t, name) => connectWith(KvClient, t, name);

/** Waits until every running store has applied the same index on every range and holds the same data. */
export async function converge(t, timeoutMs = 45000) {
  const same = (ss, f) => new Set(ss.map(f)).size === 1;
  const settled = (ss) =>
    ss.every(Boolean) && same(ss, (s) => s.ranges.length) && ss[0].ranges.every((_, i) => same(ss, (s) => JSON.stringify(s.ranges[i].data)) && same(ss, (s) => s.ranges[i].applied));
  const r = await poll(t, () => states(t, running(t)), { timeoutMs, everyMs: 150, done: settled });
  return r.value.filter(Boolean);
}

export function brief(s) {
  if (!s) return null;
  return { id: s.id, clock: s.clock, ranges: s.ranges.map(({ rangeId, role, term, leader, leaseValid, commit, applied }) => ({ rangeId, role, term, leader, leaseValid, commit, applied })) };
}
