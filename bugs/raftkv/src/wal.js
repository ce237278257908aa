// wal.js — the write-ahead log, after etcd's wal package. Raft entries and the
// HardState {term, vote, commit} are appended as records; on open the records
// are replayed, a later entry at an index replacing the earlier one and
// everything after it.

const WAL_FILE = 'wal';

export class WAL {
  /** @param {DDBench.Disk} disk the node's disk (rt.disk) */
  constructor(disk) {
    this.disk = disk;
  }

  /** @returns {{ hardState: { term: number, vote: string, commit: number }, entries: Array<{ index: number, term: number, data: any }> }} */
  readAll() {
    let hardState = { term: 0, vote: '', commit: 0 };
    const entries = [];
    for (const line of (this.disk.read(WAL_FILE) ?? '').split('\n')) {
      if (!line) continue;
      let rec;
      try {
        rec = JSON.parse(line);
      } catch {
        break; // a torn tail record: nothing after it was synced
      }
      if (rec.type === 'state') {
        hardState = { term: rec.term, vote: rec.vote, commit: rec.commit };
      } else {
        entries.length = rec.index - 1;
        entries.push({ index: rec.index, term: rec.term, data: rec.data });
      }
    }
    hardState.commit = Math.min(hardState.commit, entries.length);
    return { hardState, entries };
  }

  /** Appends entries and (if given) a new HardState, then syncs. */
  save(hardState, entries) {
    let out = '';
    for (const e of entries) out += JSON.stringify({ type: 'entry', index: e.index, term: e.term, data: e.data }) + '\n';
    if (hardState) out += JSON.stringify({ type: 'state', ...hardState }) + '\n';
    if (!out) return;
    this.disk.append(WAL_FILE, out);
    this.disk.sync();
  }
}
