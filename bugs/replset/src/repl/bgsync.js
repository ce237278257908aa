// bgsync.js — a secondary's oplog replication, after mongo/db/repl/bgsync,
// oplog_fetcher and rs_rollback: choose a sync source that is ahead of us,
// pull its oplog from our last fetched entry on (`find` / `findReply`), check
// that the batch starts where our oplog ends, apply it, and report the new
// position (replSetUpdatePosition). When the source's oplog no longer holds our
// last entry, our oplog has diverged from the set and its tail is rolled back to
// the newest entry both oplogs share.

import { NULL_OPTIME, compareOpTime, fmt, opTimeOf, sameOpTime } from './optime.js';
import { PRIMARY, ROLLBACK, SECONDARY } from './replication_coordinator.js';

const BATCH_LIMIT = 200;

export class BackgroundSync {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {import('./replication_coordinator.js').ReplicationCoordinator} repl
   * @param {any} db the mongod (oplog, applyBatch, truncateOplogAfter)
   */
  constructor(rt, repl, db) {
    this.rt = rt;
    this.repl = repl;
    this.db = db;
    this.fetchIntervalMs = Number(rt.config.fetchIntervalMs ?? 50);
    this.fetchTimeoutMs = Number(rt.config.fetchTimeoutMs ?? 1000);
    this.syncSource = null;
    /** @type {Map<string, number>} member -> denylisted until */
    this.denylist = new Map();
    this.inFlight = null;
    this.reqSeq = 0;
  }

  start() {
    const loop = () => {
      this.tick();
      this.rt.setTimer(this.fetchIntervalMs, loop);
    };
    this.rt.setTimer(Math.floor(this.rt.random() * this.fetchIntervalMs), loop);
  }

  lastFetched() {
    return opTimeOf(this.db.oplog[this.db.oplog.length - 1]);
  }

  tick() {
    if (this.inFlight || this.repl.state !== SECONDARY) return;
    if (!this.syncSource) this.chooseNewSyncSource();
    if (!this.syncSource) return;
    const reqId = ++this.reqSeq;
    const timer = this.rt.setTimer(this.fetchTimeoutMs, () => {
      if (this.inFlight?.reqId !== reqId) return;
      this.rt.log.info('oplog fetcher timed out, choosing a new sync source', { syncSource: this.syncSource });
      this.denylist.set(this.syncSource, this.repl.steadyNow() + this.repl.electionTimeoutMs);
      this.inFlight = null;
      this.syncSource = null;
    });
    this.inFlight = { reqId, source: this.syncSource, timer, kind: 'find' };
    this.rt.send(this.syncSource, 'find', { reqId, term: this.repl.term, lastFetched: this.lastFetched(), limit: BATCH_LIMIT });
  }

  /**
   * The primary if it is ahead of us, otherwise the member furthest ahead. As in MongoDB's
   * TopologyCoordinator::chooseNewSyncSource, "ahead" is read from the heartbeats' applied
   * timestamps.
   */
  chooseNewSyncSource() {
    const now = this.repl.steadyNow();
    const mine = this.lastFetched();
    let best = null;
    for (const [id, m] of this.repl.memberData) {
      if ((this.denylist.get(id) ?? 0) > now) continue;
      if (now - m.lastHeartbeat > this.repl.electionTimeoutMs) continue;
      if (m.state !== PRIMARY && m.state !== SECONDARY) continue;
      if (m.appliedOpTime.ts <= mine.ts) continue;
      if (!best || (m.state === PRIMARY && best.m.state !== PRIMARY) || (best.m.state !== PRIMARY && m.appliedOpTime.ts > best.m.appliedOpTime.ts)) {
        best = { id, m };
      }
    }
    if (best) {
      this.syncSource = best.id;
      this.rt.log.info('sync source candidate chosen', { syncSource: best.id, opTime: fmt(best.m.appliedOpTime), mine: fmt(mine) });
    }
  }

  /** On the sync source: answers a find on the oplog from lastFetched on. */
  onFind(from, q) {
    this.repl.updateTerm(q.term, `oplog query from ${from}`);
    const oplog = this.db.oplog;
    let i = oplog.length;
    while (i > 0 && oplog[i - 1].ts >= q.lastFetched.ts) i--;
    const entries = oplog.slice(i, i + q.limit);
    this.rt.send(from, 'findReply', {
      reqId: q.reqId,
      term: this.repl.term,
      entries,
      lastOpTime: this.repl.myLastAppliedOpTime(),
      lastCommittedOpTime: this.repl.lastCommittedOpTime,
      primaryId: this.repl.primaryId,
      rbid: this.repl.rbid,
    });
  }

  onFindReply(from, r) {
    const f = this.inFlight;
    if (!f || f.reqId !== r.reqId || f.source !== from) return;
    f.timer.cancel();
    this.inFlight = null;
    this.repl.updateTerm(r.term, `oplog batch from ${from}`);
    if (this.repl.state !== SECONDARY) return;
    const lastFetched = this.lastFetched();
    let batch = r.entries;
    if (this.db.oplog.length > 0) {
      if (!this.checkRemoteOplogStart(from, batch, lastFetched, r.lastOpTime)) return;
      batch = batch.slice(1);
    }
    if (batch.length > 0) {
      this.db.applyBatch(batch);
      this.rt.send(from, 'replSetUpdatePosition', { term: this.repl.term, appliedOpTime: this.lastFetched(), rbid: this.repl.rbid });
    }
    this.repl.advanceCommitPoint(r.lastCommittedOpTime, from);
  }

  /** Does the source's batch start with our last fetched entry? If not: choose another source, or roll back. */
  checkRemoteOplogStart(from, batch, lastFetched, remoteLastOpTime) {
    if (batch.length > 0 && sameOpTime(opTimeOf(batch[0]), lastFetched)) return true;
    if (compareOpTime(remoteLastOpTime, lastFetched) < 0) {
      this.rt.log.info("sync source's last optime is older than ours, choosing a new sync source", {
        syncSource: from,
        remoteLastOpTime: fmt(remoteLastOpTime),
        lastFetched: fmt(lastFetched),
      });
      this.denylist.set(from, this.repl.steadyNow() + 2 * this.repl.electionTimeoutMs);
      this.syncSource = null;
      return false;
    }
    this.rt.log.info('our last fetched optime is not in the sync source oplog, starting rollback', {
      syncSource: from,
      remoteLastOpTime: fmt(remoteLastOpTime),
      lastFetched: fmt(lastFetched),
    });
    this.startRollback(from);
    return false;
  }

  // ---- rollback ----------------------------------------------------------------------

  startRollback(source) {
    this.repl.state = ROLLBACK;
    const reqId = ++this.reqSeq;
    const timer = this.rt.setTimer(this.fetchTimeoutMs, () => {
      if (this.inFlight?.reqId !== reqId) return;
      this.rt.log.warn('rollback aborted: sync source did not answer', { syncSource: source });
      this.inFlight = null;
      this.syncSource = null;
      this.repl.state = SECONDARY;
    });
    this.inFlight = { reqId, source, timer, kind: 'rollback' };
    this.rt.send(source, 'rollbackOplogQuery', { reqId, term: this.repl.term });
  }

  onRollbackQuery(from, q) {
    this.repl.updateTerm(q.term, `rollback query from ${from}`);
    this.rt.send(from, 'rollbackOplogReply', { reqId: q.reqId, term: this.repl.term, opTimes: this.db.oplog.map((e) => [e.ts, e.t]) });
  }

  onRollbackReply(from, r) {
    const f = this.inFlight;
    if (!f || f.reqId !== r.reqId || f.kind !== 'rollback') return;
    f.timer.cancel();
    this.inFlight = null;
    this.repl.updateTerm(r.term, `rollback reply from ${from}`);
    const remote = new Set(r.opTimes.map(([ts, t]) => `${t}:${ts}`));
    const oplog = this.db.oplog;
    let common = oplog.length;
    while (common > 0 && !remote.has(`${oplog[common - 1].t}:${oplog[common - 1].ts}`)) common--;
    const undone = oplog.slice(common);
    const commonPoint = common > 0 ? opTimeOf(oplog[common - 1]) : NULL_OPTIME;
    this.db.truncateOplogAfter(common);
    this.repl.rbid++;
    this.rt.log.info('rollback finished', {
      syncSource: from,
      commonPoint: fmt(commonPoint),
      rolledBack: undone.length,
      ids: undone.filter((e) => e.op === 'u').map((e) => e.o._id),
      rbid: this.repl.rbid,
    });
    this.repl.state = SECONDARY;
    this.rt.send(from, 'replSetUpdatePosition', { term: this.repl.term, appliedOpTime: commonPoint, rbid: this.repl.rbid });
  }
}
