// walsplitter.js — splitting a dead server's WAL on a region server, after HBase's
// WALSplitter and RecoveredEditsOutputSink. The master hands the WAL to a live
// region server (SplitWAL). The worker reads it and gives each region with edits in
// it a writer, which appends the region's edits, splitChunkEdits at a time, to a
// temporary file in the region's recovered-edits directory; the writers of
// different regions run side by side, like the sink's writer threads. Closing the
// writers renames each temporary file to its final name (the WAL's name), where the
// region finds it when it is opened. A final file that is already there was put in
// place by an earlier attempt at the same WAL, and is kept.

/** The directory of a region's recovered edits. */
export function recoveredDir(region) {
  return `/hbase/recovered/${region}`;
}

export class WALSplitter {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {import('./zkwatcher.js').ZKWatcher} zk
   * @param {string} worker this region server's name (temporary files carry it, so two workers never share one)
   */
  constructor(rt, zk, worker) {
    this.rt = rt;
    this.zk = zk;
    this.worker = worker;
    this.chunkEdits = Math.max(1, Number(rt.config.splitChunkEdits ?? 5));
    /** @type {Set<{ wal: string, writers: Array<{ region: string, edits: any[], written: number, temp: string, path: string }>, closed: boolean, cb: (ok: boolean) => void }>} */
    this.tasks = new Set();
  }

  /** Splits `wal` into recovered edits; `cb(ok)` once its writers are closed. */
  split(wal, cb) {
    const name = wal.split('/').pop();
    /** @type {{ wal: string, writers: Array<{ region: string, edits: any[], written: number, temp: string, path: string }>, closed: boolean, cb: (ok: boolean) => void }} */
    const task = { wal, writers: [], closed: false, cb };
    this.tasks.add(task);
    this.rt.log.info('splitting WAL', { wal });
    this.zk.opRetry('FsRead', { file: wal, offset: 0 }, (res) => {
      if (task.closed) return;
      /** @type {Map<string, any[]>} */
      const byRegion = new Map();
      for (const e of res.records ?? []) byRegion.set(e.region, [...(byRegion.get(e.region) ?? []), e]);
      for (const [region, edits] of byRegion) {
        const dir = recoveredDir(region);
        task.writers.push({ region, edits, written: 0, temp: `${dir}/${name}.${this.worker}.temp`, path: `${dir}/${name}` });
      }
      let left = task.writers.length;
      if (left === 0) return this.closeWriters(task, true);
      for (const w of task.writers) this.write(task, w, () => --left === 0 && this.closeWriters(task, true));
    });
  }

  /** Appends a writer's edits to its temporary file, a chunk at a time. */
  write(task, w, cb) {
    if (task.closed) return;
    if (w.written >= w.edits.length) return cb();
    const chunk = w.edits.slice(w.written, w.written + this.chunkEdits);
    this.zk.opRetry('FsAppend', { file: w.temp, records: chunk }, () => {
      w.written += chunk.length;
      this.write(task, w, cb);
    });
  }

  /** The region server is aborting: the splits it is running stop where they are. */
  abort() {
    for (const task of this.tasks) this.closeWriters(task, false);
  }

  /** Closes a split's writers: a split that finished puts every region's edits in place; one cut short leaves none behind. */
  closeWriters(task, finished) {
    if (task.closed) return;
    task.closed = true;
    this.tasks.delete(task);
    let left = task.writers.length;
    if (left === 0) return task.cb(finished);
    const closed = () => --left === 0 && task.cb(finished);
    for (const w of task.writers) {
      if (finished) this.finalize(w, closed);
      else this.discard(w, closed);
    }
  }

  finalize(w, cb) {
    this.zk.opRetry('FsRename', { file: w.temp, to: w.path }, (res) => {
      if (res.ok) {
        this.rt.log.info('recovered edits finalized', { region: w.region, path: w.path, edits: w.written });
        return cb();
      }
      if (res.error !== 'destination exists') return cb();
      this.rt.log.info('recovered edits already in place', { region: w.region, path: w.path });
      this.zk.opRetry('FsDelete', { file: w.temp }, () => cb());
    });
  }

  discard(w, cb) {
    this.zk.opRetry('FsDelete', { file: w.temp }, () => {
      this.rt.log.info('recovered edits discarded', { region: w.region, path: w.temp, edits: w.written });
      cb();
    });
  }
}
