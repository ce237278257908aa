// column-family-store.js — after Cassandra's ColumnFamilyStore, Memtable and
// CommitLog: cells with last-write-wins timestamps, every mutation appended to
// the commit log and synced before it is acknowledged, replayed on start.

export class ColumnFamilyStore {
  constructor(rt) {
    this.rt = rt;
    /** @type {Map<string, {value: string, timestamp: number}>} */
    this.memtable = new Map();
  }

  /** Replays the commit log into the memtable. */
  replay() {
    const text = this.rt.disk.read('commitlog') ?? '';
    let n = 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const m = JSON.parse(line);
        this.applyLocal(m.key, m.value, m.timestamp);
        n++;
      } catch {
        break;
      }
    }
    return n;
  }

  /** Applies a cell if it is newer than what the memtable holds (LWW; ties go to the larger value). */
  applyLocal(key, value, timestamp) {
    const cur = this.memtable.get(key);
    if (cur && (cur.timestamp > timestamp || (cur.timestamp === timestamp && cur.value >= value))) return false;
    this.memtable.set(key, { value, timestamp });
    return true;
  }

  apply(key, value, timestamp) {
    const changed = this.applyLocal(key, value, timestamp);
    if (changed) {
      this.rt.disk.append('commitlog', JSON.stringify({ key, value, timestamp }) + '\n');
      this.rt.disk.sync();
    }
    return changed;
  }

  get(key) {
    return this.memtable.get(key) ?? null;
  }

  hash() {
    let h = 0;
    for (const k of [...this.memtable.keys()].sort()) {
      const c = this.memtable.get(k);
      const s = `${k}=${c.value}@${c.timestamp};`;
      for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
    }
    return (h >>> 0).toString(16);
  }
}
