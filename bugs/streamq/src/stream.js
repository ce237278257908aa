// stream.js — a replicated stream, after nats-server's stream.go: messages
// are stored under increasing stream sequences, with a dedupe window keyed
// by the publisher's Nats-Msg-Id, so a retried publish is stored only once.

export class Stream {
  constructor(name) {
    this.name = name;
    /** @type {Map<number, { seq: number, subject: string, data: string, msgId: string | null }>} */
    this.msgs = new Map();
    this.firstSeq = 1;
    this.lastSeq = 0;
    /** @type {Map<string, number>} Nats-Msg-Id to the sequence that stored it */
    this.ddmap = new Map();
  }

  /** Stores a replicated message; returns its sequence and whether it was a duplicate. */
  processJetStreamMsg({ subject, data, msgId }) {
    if (msgId && this.ddmap.has(msgId)) return { seq: this.ddmap.get(msgId), duplicate: true };
    const seq = ++this.lastSeq;
    this.msgs.set(seq, { seq, subject, data, msgId: msgId ?? null });
    if (msgId) this.ddmap.set(msgId, seq);
    return { seq, duplicate: false };
  }

  getMsg(seq) {
    return this.msgs.get(seq) ?? null;
  }

  state() {
    return { messages: this.msgs.size, firstSeq: this.firstSeq, lastSeq: this.lastSeq };
  }

  /** A hash over every stored message, like comparing the replicas' stream state. */
  hash() {
    let h = 0x811c9dc5;
    for (let seq = this.firstSeq; seq <= this.lastSeq; seq++) {
      const m = this.msgs.get(seq);
      const s = m ? `${seq}|${m.subject}|${m.data}|${m.msgId};` : `${seq}|-;`;
      for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
    }
    return h.toString(16).padStart(8, '0');
  }
}
