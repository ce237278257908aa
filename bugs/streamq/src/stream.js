// stream.js — a replicated stream, after nats-server's stream.go: messages
// are stored under increasing stream sequences. The dedupe map remembers the
// Nats-Msg-Id of each message for the stream's duplicate window: the leader
// checks it before proposing a publish (jetstream.js), and every member records
// the sequence a msg ID was stored under when it applies the message.

export class Stream {
  /**
   * @param {string} name
   * @param {number} duplicates the duplicate window in ms (NATS: `duplicate_window`)
   */
  constructor(name, duplicates) {
    this.name = name;
    this.duplicates = duplicates;
    /** @type {Map<number, { seq: number, subject: string, data: string, msgId: string | null }>} */
    this.msgs = new Map();
    this.firstSeq = 1;
    this.lastSeq = 0;
    /** @type {Map<string, { id: string, seq: number, ts: number }>} Nats-Msg-Id to its entry; seq 0 while the publish is in flight */
    this.ddmap = new Map();
    /** @type {Array<{ id: string, seq: number, ts: number }>} the same entries in the order they were stored, for purging */
    this.ddarr = [];
  }

  /** Stores a committed message; returns its sequence. */
  processJetStreamMsg({ subject, data, msgId, ts }) {
    this.purgeMsgIds(ts);
    const seq = ++this.lastSeq;
    this.msgs.set(seq, { seq, subject, data, msgId: msgId ?? null });
    if (msgId) {
      const dde = this.ddmap.get(msgId);
      if (dde) {
        dde.seq = seq;
        dde.ts = ts;
      } else {
        this.storeMsgId({ id: msgId, seq, ts });
      }
    }
    return seq;
  }

  /** The dedupe entry of a msg ID still inside the duplicate window, if any. */
  checkMsgId(id, now) {
    this.purgeMsgIds(now);
    return this.ddmap.get(id) ?? null;
  }

  storeMsgId(dde) {
    this.ddmap.set(dde.id, dde);
    this.ddarr.push(dde);
  }

  /** Forgets msg IDs older than the duplicate window. */
  purgeMsgIds(now) {
    let n = 0;
    while (n < this.ddarr.length && now - this.ddarr[n].ts >= this.duplicates) {
      const dde = this.ddarr[n++];
      if (this.ddmap.get(dde.id) === dde) this.ddmap.delete(dde.id);
    }
    if (n > 0) this.ddarr.splice(0, n);
  }

  /** Drops the msg IDs staged for publishes that were never stored (sequence 0). */
  clearInflightMsgIds() {
    for (const dde of this.ddarr) if (dde.seq === 0 && this.ddmap.get(dde.id) === dde) this.ddmap.delete(dde.id);
    this.ddarr = this.ddarr.filter((dde) => dde.seq !== 0);
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
