// consumer.js — a durable pull consumer, after nats-server's consumer.go:
// `delivered` is the last stream sequence handed out, `ackFloor` the highest
// sequence below which everything is acknowledged. Both change only through
// replicated entries, so a new leader carries on where the old one stopped.

export class Consumer {
  constructor(name) {
    this.name = name;
    this.delivered = 0;
    this.ackFloor = 0;
  }

  /** The sequences a fetch of `batch` messages would hand out next, given the stream's last sequence. */
  nextBatch(batch, lastSeq) {
    const out = [];
    for (let seq = this.delivered + 1; seq <= lastSeq && out.length < batch; seq++) out.push(seq);
    return out;
  }

  applyDelivered(upTo) {
    if (upTo > this.delivered) this.delivered = upTo;
  }

  /** AckAll: acknowledges every sequence up to seq (never past what was delivered). */
  applyAck(seq) {
    const floor = Math.min(seq, this.delivered);
    if (floor > this.ackFloor) this.ackFloor = floor;
  }

  info() {
    return { name: this.name, delivered: this.delivered, ackFloor: this.ackFloor, numPending: 0 };
  }
}
