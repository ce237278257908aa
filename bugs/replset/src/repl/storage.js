// storage.js — the durable local database, after mongo/db/repl/storage_interface:
// the oplog (local.oplog.rs), one JSON line per entry, and the last-vote document
// (local.replset.election). Both are synced before anything that depends on them
// is acknowledged or sent.

const OPLOG = 'oplog.rs';
const LAST_VOTE = 'replset.election';

export class StorageInterface {
  /** @param {DDBench.Disk} disk rt.disk */
  constructor(disk) {
    this.disk = disk;
  }

  /** @returns {Array<{ ts: number, t: number, op: string, o: any }>} */
  loadOplog() {
    const entries = [];
    for (const line of (this.disk.read(OPLOG) ?? '').split('\n')) {
      if (!line) continue;
      try {
        entries.push(JSON.parse(line));
      } catch {
        break; // torn tail
      }
    }
    return entries;
  }

  appendOplog(entries) {
    if (entries.length === 0) return;
    this.disk.append(OPLOG, entries.map((e) => JSON.stringify(e) + '\n').join(''));
    this.disk.sync();
  }

  /** Rewrites the oplog with only the given entries (rollback truncates its tail). */
  replaceOplog(entries) {
    this.disk.write(OPLOG, entries.map((e) => JSON.stringify(e) + '\n').join(''));
    this.disk.sync();
  }

  loadLastVote() {
    const raw = this.disk.read(LAST_VOTE);
    return raw ? JSON.parse(raw) : { term: 0, candidate: null };
  }

  storeLastVote(vote) {
    this.disk.write(LAST_VOTE, JSON.stringify(vote));
    this.disk.sync();
  }
}
