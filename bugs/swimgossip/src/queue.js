// queue.js — after memberlist's TransmitLimitedQueue: broadcasts about members
// waiting to be piggybacked on gossip. A newer broadcast about a member
// invalidates an older one; each is sent retransmitMult * log10(n + 1) times.

export class TransmitLimitedQueue {
  /** @param {() => number} numNodes @param {number} retransmitMult */
  constructor(numNodes, retransmitMult) {
    this.numNodes = numNodes;
    this.retransmitMult = retransmitMult;
    /** @type {{node: string, msg: any, transmits: number}[]} */
    this.queue = [];
  }

  retransmitLimit() {
    return this.retransmitMult * Math.max(1, Math.ceil(Math.log10(this.numNodes() + 1)));
  }

  queueBroadcast(node, msg) {
    this.queue = this.queue.filter((b) => b.node !== node);
    this.queue.push({ node, msg, transmits: 0 });
  }

  /** The broadcasts to piggyback on one message, fewest transmits first. */
  getBroadcasts(max) {
    const limit = this.retransmitLimit();
    const out = [];
    this.queue.sort((a, b) => a.transmits - b.transmits);
    for (const b of this.queue.slice(0, max)) {
      out.push(b.msg);
      b.transmits++;
    }
    this.queue = this.queue.filter((b) => b.transmits < limit);
    return out;
  }

  numQueued() {
    return this.queue.length;
  }
}
