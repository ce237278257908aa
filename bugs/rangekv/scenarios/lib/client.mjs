// Client helpers for the RangeKV scenarios: a range cache filled from Status,
// requests routed to a range's leaseholder (following NotLeaseHolderError),
// and a transaction runner that retries on TransactionRetryError.

/** The ranges, as the stores define them. */
export const RANGES = [
  { rangeId: 1, start: '', end: 'm' },
  { rangeId: 2, start: 'm', end: '\uffff' },
];
export const rangeOf = (key) => RANGES.find((r) => r.start <= key && key < r.end).rangeId;

const RETRYABLE = new Set(['NotLeaseHolderError', 'timeout']);

export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

export class KvClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
    /** @type {Map<number, string>} the leaseholder this client believes each range has */
    this.leaseholders = new Map();
  }

  async send(node, type, body, timeoutMs = 1500) {
    try {
      return await this.c.request(node, type, body, timeoutMs);
    } catch (e) {
      return { ok: false, error: 'timeout', detail: String(e?.message ?? e) };
    }
  }

  running() {
    return this.t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id);
  }

  /** The store whose replica of rangeId holds a valid lease, or null if none shows up in time. */
  async findLeaseholder(rangeId, timeoutMs = 45000, among = this.t.nodes) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const live = new Set(this.running());
      const all = await Promise.all(among.filter((n) => live.has(n)).map((n) => this.send(n, 'Status', {}, 800)));
      const holders = all.filter((s) => s.ok && s.ranges.find((r) => r.rangeId === rangeId)?.leaseValid);
      if (holders.length > 0) {
        const best = holders.sort((a, b) => b.ranges[rangeId - 1].term - a.ranges[rangeId - 1].term)[0];
        this.leaseholders.set(rangeId, best.id);
        return best.id;
      }
      if (d.expired) return null;
      await this.t.sleep(100);
    }
  }

  /** Sends a request for rangeId to its leaseholder, following redirects until timeoutMs. */
  async toRange(rangeId, type, body, { timeoutMs = 20000, tryMs = 5000 } = {}) {
    const d = deadline(this.t, timeoutMs);
    let last = { ok: false, error: 'no leaseholder' };
    while (!d.expired) {
      let target = this.leaseholders.get(rangeId);
      if (!target) {
        target = await this.findLeaseholder(rangeId, 1000);
        if (!target) continue;
      }
      const r = await this.send(target, type, body, tryMs);
      if (r.ok || !RETRYABLE.has(r.error)) return r;
      last = r;
      if (r.leader && r.leader !== target) this.leaseholders.set(rangeId, r.leader);
      else this.leaseholders.delete(rangeId);
      await this.t.sleep(50);
    }
    return last;
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

export async function connect(t, name) {
  return new KvClient(t, await t.client(name));
}

/** Waits until every running store has applied the same index on every range and holds the same data. */
export async function converge(t, timeoutMs = 45000) {
  const d = deadline(t, timeoutMs);
  let states = [];
  for (;;) {
    const live = t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id);
    states = await Promise.all(live.map((n) => t.state(n).catch(() => null)));
    const ok =
      states.every(Boolean) &&
      [0, 1].every((i) => new Set(states.map((s) => JSON.stringify(s.ranges[i].data))).size === 1 && new Set(states.map((s) => s.ranges[i].applied)).size === 1);
    if (ok) return states;
    if (d.expired) return states.filter(Boolean);
    await t.sleep(150);
  }
}

export function brief(s) {
  if (!s) return null;
  return { id: s.id, clock: s.clock, ranges: s.ranges.map(({ rangeId, role, term, leader, leaseValid, commit, applied }) => ({ rangeId, role, term, leader, leaseValid, commit, applied })) };
}
