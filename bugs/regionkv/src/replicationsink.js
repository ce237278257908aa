// replicationsink.js — the peer cluster, reduced to its ReplicationSink: it
// applies the WAL edits that source clusters ship to it and serves Get.

export class ReplicationSink {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    /** @type {Map<string, { value: string, seq: number, region: string }>} */
    this.rows = new Map();
    this.batches = 0;
  }

  start() {
    this.rt.onMessage((msg) => {
      const b = msg.body ?? {};
      const reply = (res) => this.rt.send(msg.from, msg.type + 'Resp', { reqId: b.reqId ?? null, ...res });
      if (msg.type === 'ReplicateWALEntry') {
        for (const e of b.entries ?? []) {
          const cur = this.rows.get(e.row);
          if (!cur || e.seq >= cur.seq) this.rows.set(e.row, { value: e.value, seq: e.seq, region: e.region });
        }
        this.batches++;
        this.rt.log.info('replicated entries', { source: b.source, queue: b.queue, count: (b.entries ?? []).length });
        return reply({ ok: true });
      }
      if (msg.type === 'Get') {
        const cell = this.rows.get(String(b.row));
        return reply({ ok: true, found: Boolean(cell), value: cell ? cell.value : null });
      }
      if (msg.type === 'Status') return reply({ ok: true, rows: this.rows.size });
      reply({ ok: false, error: `unknown request ${msg.type}` });
    });
    this.rt.exposeState(() => ({
      id: this.rt.id,
      batches: this.batches,
      rowCount: this.rows.size,
      rows: Object.fromEntries([...this.rows].map(([k, c]) => [k, c.value])),
    }));
    this.rt.log.info('replication sink started');
  }
}
