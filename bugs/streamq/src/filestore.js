// filestore.js — the raft write-ahead log and the term-and-vote file, after
// nats-server's filestore as the raft layer uses it (msg blocks, tav.idx and
// peers.idx).
// Records are appended to an in-memory cache and written out; they only
// become durable at a flush. A background flusher syncs every syncInterval.

const LOG = 'raft/msgs.blk';
const TAV = 'raft/tav.idx';
const PEERS = 'raft/peers.idx';

export class FileStore {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.disk = rt.disk;
    this.syncInterval = Number(rt.config.syncIntervalMs ?? 2000);
    this.dirty = false;
  }

  /** Replays the log: a later record at an index replaces that index and everything after it. */
  load() {
    const entries = [];
    for (const line of (this.disk.read(LOG) ?? '').split('\n')) {
      if (!line) continue;
      let rec;
      try {
        rec = JSON.parse(line);
      } catch {
        break;
      }
      entries.length = rec.index - 1;
      entries.push({ index: rec.index, term: rec.term, data: rec.data });
    }
    let tav = { term: 0, vote: '' };
    try {
      tav = JSON.parse(this.disk.read(TAV) ?? 'null') ?? tav;
    } catch {
      // keep the zero state
    }
    let members = null;
    try {
      members = JSON.parse(this.disk.read(PEERS) ?? 'null');
    } catch {
      // start from the configured nodes
    }
    return { entries, term: tav.term, vote: tav.vote, members };
  }

  storeEntries(entries) {
    if (entries.length === 0) return;
    this.disk.append(LOG, entries.map((e) => JSON.stringify(e)).join('\n') + '\n');
    this.dirty = true;
  }

  /** Term and vote are written and synced at once: a vote must never be forgotten. */
  writeTermVote(term, vote) {
    this.disk.write(TAV, JSON.stringify({ term, vote }));
    this.disk.sync();
  }

  /** The peer set after a membership change, synced at once like term and vote. */
  writePeerState(members) {
    this.disk.write(PEERS, JSON.stringify(members));
    this.disk.sync();
  }

  flush() {
    if (!this.dirty) return;
    this.disk.sync();
    this.dirty = false;
  }

  startFlusher() {
    const loop = () => {
      if (this.dirty) this.rt.log.debug('filestore flush', {});
      this.flush();
      this.rt.setTimer(this.syncInterval, loop);
    };
    this.rt.setTimer(this.syncInterval, loop);
  }
}
