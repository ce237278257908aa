// replication_coordinator.js — member state, terms and elections, heartbeats,
// the commit point and write concern, after mongo/db/repl/replication_coordinator_impl
// and topology_coordinator (protocol version 1).
//
// Messages between members: replSetHeartbeat (every heartbeatIntervalMs, to every
// member), replSetRequestVotes / replSetRequestVotesReply (dry run first, then the
// real election), replSetUpdatePosition (a secondary reports how far it has applied).

import { NULL_OPTIME, compareOpTime, fmt, opTimeOf } from './optime.js';

export const PRIMARY = 'PRIMARY';
export const SECONDARY = 'SECONDARY';
export const ROLLBACK = 'ROLLBACK';

export class ReplicationCoordinator {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {import('./storage.js').StorageInterface} storage
   * @param {{ oplog: any[], onApplied(entries: any[]): void }} db
   */
  constructor(rt, storage, db) {
    this.rt = rt;
    this.storage = storage;
    this.db = db;
    const cfg = rt.config;
    const [lo, hi] = Array.isArray(cfg.electionTimeoutMs) ? cfg.electionTimeoutMs : [1000, 2000];
    this.electionTimeoutMs = Number(lo);
    this.electionTimeoutMaxMs = Number(hi);
    this.heartbeatIntervalMs = Number(cfg.heartbeatIntervalMs ?? 200);
    this.priorities = /** @type {Record<string, number>} */ (cfg.priorities ?? {});
    this.majority = Math.floor(rt.nodes.length / 2) + 1;
    this.peers = rt.nodes.filter((n) => n !== rt.id);

    this.lastVote = storage.loadLastVote();
    const last = db.oplog[db.oplog.length - 1];
    this.term = Math.max(this.lastVote.term, last ? last.t : 0);
    this.state = SECONDARY;
    this.primaryId = null;
    this.lastCommittedOpTime = NULL_OPTIME;
    this.rbid = 0;
    /** @type {Map<string, { state: string, appliedOpTime: any, lastHeartbeat: number, term: number }>} */
    this.memberData = new Map();
    /** @type {Array<{ opTime: any, reply(res: any): void, timer: any }>} write concern waiters */
    this.waiters = [];
    this.electionTimer = null;
    /** the dry run in progress: its term (ours + 1) and the members that would vote for us */
    this.election = null;
    /** the real election we stand in: its term and the votes granted so far */
    this.votes = null;
    /** Heartbeat rounds since start: a steady clock for liveness (rt.now() is wall-clock time and may jump). */
    this.rounds = 0;
  }

  start() {
    this.resetElectionTimer();
    const beat = () => {
      this.rounds++;
      this.sendHeartbeats();
      this.checkPrimaryLiveness();
      this.rt.setTimer(this.heartbeatIntervalMs, beat);
    };
    beat();
  }

  /** Milliseconds on the steady clock. */
  steadyNow() {
    return this.rounds * this.heartbeatIntervalMs;
  }

  myLastAppliedOpTime() {
    return opTimeOf(this.db.oplog[this.db.oplog.length - 1]);
  }

  priority(id = this.rt.id) {
    return Number(this.priorities[id] ?? 1);
  }

  // ---- terms and state transitions -------------------------------------------------

  /** Adopts a newer term seen in any message; a primary steps down. */
  updateTerm(term, why) {
    if (term <= this.term) return false;
    this.rt.log.info('updating term', { from: this.term, to: term, why });
    this.term = term;
    this.primaryId = null;
    if (this.state === PRIMARY) this.stepDown(`saw newer term ${term}`);
    return true;
  }

  stepDown(reason) {
    if (this.state !== PRIMARY) return;
    this.state = SECONDARY;
    this.primaryId = null;
    this.rt.log.info('stepping down from primary', { term: this.term, reason });
    for (const w of this.waiters.splice(0)) {
      w.timer.cancel();
      w.reply({ ok: false, error: 'InterruptedDueToReplStateChange', errmsg: 'operation was interrupted because the node stepped down' });
    }
    this.resetElectionTimer();
  }

  becomePrimary() {
    this.state = PRIMARY;
    this.primaryId = this.rt.id;
    this.election = null;
    this.cancelElectionTimer();
    this.rt.log.info('transition to PRIMARY', { term: this.term, lastApplied: this.myLastAppliedOpTime() });
    // A new primary writes a no-op in its own term; the commit point can only move onto an entry of the current term.
    this.db.appendLocal({ op: 'n', o: { msg: 'new primary' } });
    this.sendHeartbeats();
  }

  // ---- elections (protocol version 1) ----------------------------------------------

  cancelElectionTimer() {
    this.electionTimer?.cancel();
    this.electionTimer = null;
  }

  resetElectionTimer() {
    this.cancelElectionTimer();
    if (this.state === PRIMARY || this.priority() <= 0) return;
    // Higher priority members time out a little sooner.
    const span = this.electionTimeoutMaxMs - this.electionTimeoutMs;
    const offset = Math.floor(this.rt.random() * span) / Math.max(1, this.priority());
    this.electionTimer = this.rt.setTimer(this.electionTimeoutMs + offset, () => {
      this.electionTimer = null;
      this.startElection();
    });
  }

  startElection() {
    if (this.state !== SECONDARY) return this.resetElectionTimer();
    this.rt.log.info('starting an election, since we have seen no PRIMARY in the past electionTimeoutMs', { term: this.term });
    this.election = { term: this.term + 1, votes: new Set([this.rt.id]) };
    this.requestVotes(true, this.term + 1);
    this.resetElectionTimer();
  }

  requestVotes(dryRun, term) {
    const lastAppliedOpTime = this.myLastAppliedOpTime();
    for (const p of this.peers) this.rt.send(p, 'replSetRequestVotes', { term, candidate: this.rt.id, dryRun, lastAppliedOpTime });
  }

  onRequestVotes(from, req) {
    const reply = (voteGranted, reason) => {
      this.rt.send(from, 'replSetRequestVotesReply', { term: this.term, voteGranted, reason, dryRun: req.dryRun, electionTerm: req.term });
    };
    if (!req.dryRun) this.updateTerm(req.term, `vote request from ${from}`);
    if (req.term < this.term || (req.dryRun && req.term === this.term)) return reply(false, "candidate's term is lower than mine");
    if (!req.dryRun && this.lastVote.term === req.term && this.lastVote.candidate !== from) {
      return reply(false, `already voted for ${this.lastVote.candidate} in term ${req.term}`);
    }
    if (compareOpTime(req.lastAppliedOpTime, this.myLastAppliedOpTime()) < 0) {
      return reply(false, "candidate's data is staler than mine");
    }
    if (!req.dryRun) {
      this.lastVote = { term: req.term, candidate: from };
      this.storage.storeLastVote(this.lastVote);
      this.resetElectionTimer();
    }
    return reply(true, '');
  }

  onRequestVotesReply(from, r) {
    if (!r.dryRun) this.updateTerm(r.term, `vote reply from ${from}`);
    if (!r.voteGranted) {
      this.rt.log.info('received a no vote', { from, term: r.term, reason: r.reason, dryRun: r.dryRun });
      return;
    }
    if (this.state !== SECONDARY) return;
    if (r.dryRun) {
      const e = this.election;
      if (!e || e.term !== r.electionTerm || e.term !== this.term + 1) return;
      e.votes.add(from);
      if (e.votes.size < this.majority) return;
      // Dry run won: run the real election in a new term, voting for ourselves first.
      this.election = null;
      this.term = e.term;
      this.primaryId = null;
      this.lastVote = { term: e.term, candidate: this.rt.id };
      this.storage.storeLastVote(this.lastVote);
      this.votes = { term: e.term, granted: new Set([this.rt.id]) };
      this.rt.log.info('dry election run succeeded, running for election', { term: e.term });
      this.requestVotes(false, e.term);
      return;
    }
    // A real vote counts as long as we are still a candidate in its term, even if a later dry run started.
    if (!this.votes || this.votes.term !== r.electionTerm || this.term !== r.electionTerm) return;
    this.votes.granted.add(from);
    if (this.votes.granted.size < this.majority) return;
    this.rt.log.info('election succeeded, assuming primary role', { term: this.term, votes: [...this.votes.granted] });
    this.votes = null;
    this.becomePrimary();
  }

  // ---- heartbeats ------------------------------------------------------------------

  sendHeartbeats() {
    const body = {
      term: this.term,
      state: this.state,
      appliedOpTime: this.myLastAppliedOpTime(),
      priority: this.priority(),
    };
    for (const p of this.peers) this.rt.send(p, 'replSetHeartbeat', body);
  }

  onHeartbeat(from, hb) {
    this.updateTerm(hb.term, `heartbeat from ${from}`);
    this.memberData.set(from, { state: hb.state, appliedOpTime: hb.appliedOpTime, lastHeartbeat: this.steadyNow(), term: hb.term });
    if (hb.state === PRIMARY && hb.term === this.term) {
      if (this.state === PRIMARY) {
        // Two primaries in one term cannot happen (one vote per term); keep the older claim.
        this.rt.log.warn('another primary in my term', { from, term: hb.term });
        return;
      }
      if (this.primaryId !== from) this.rt.log.info('member is now in state PRIMARY', { member: from, term: hb.term });
      this.primaryId = from;
      if (this.state === SECONDARY) this.resetElectionTimer();
      // No commit point from heartbeats: only our sync source's replies bring it, once its batch
      // has matched our oplog, so that it is on our branch of history.
    }
    if (this.state === PRIMARY) this.updateCommitPoint();
  }

  /** A primary that cannot see a majority of the set (itself included) steps down. */
  checkPrimaryLiveness() {
    if (this.state !== PRIMARY) return;
    const now = this.steadyNow();
    let seen = 1;
    for (const p of this.peers) {
      const m = this.memberData.get(p);
      if (m && now - m.lastHeartbeat <= this.electionTimeoutMaxMs) seen++;
    }
    if (seen < this.majority) this.stepDown('can no longer see a majority of the set');
  }

  // ---- replication progress, commit point, write concern ---------------------------

  onUpdatePosition(from, u) {
    this.updateTerm(u.term, `update position from ${from}`);
    const m = this.memberData.get(from) ?? { state: SECONDARY, appliedOpTime: NULL_OPTIME, lastHeartbeat: this.steadyNow(), term: u.term };
    m.appliedOpTime = u.appliedOpTime;
    this.memberData.set(from, m);
    if (this.state === PRIMARY) this.updateCommitPoint();
  }

  /** Primary: the commit point is the newest optime of the current term applied on a majority. */
  updateCommitPoint() {
    if (this.state !== PRIMARY) return;
    const applied = [this.myLastAppliedOpTime()];
    for (const p of this.peers) applied.push(this.memberData.get(p)?.appliedOpTime ?? NULL_OPTIME);
    applied.sort((a, b) => compareOpTime(b, a));
    const candidate = applied[this.majority - 1];
    if (candidate.t !== this.term) return;
    this.advanceCommitPoint(candidate, this.rt.id);
  }

  advanceCommitPoint(opTime, source) {
    if (!opTime || compareOpTime(opTime, this.lastCommittedOpTime) <= 0) return;
    this.lastCommittedOpTime = opTime;
    this.rt.log.debug('advancing commit point', { opTime: fmt(opTime), source });
    this.wakeReadyWaiters();
  }

  wakeReadyWaiters() {
    const ready = this.waiters.filter((w) => compareOpTime(this.lastCommittedOpTime, w.opTime) >= 0);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) {
      w.timer.cancel();
      w.reply({ ok: true });
    }
  }

  /** Waits until opTime is majority committed, or wtimeout passes. */
  awaitReplication(opTime, wtimeoutMs, reply) {
    const w = { opTime, reply, timer: null };
    w.timer = this.rt.setTimer(wtimeoutMs, () => {
      this.waiters = this.waiters.filter((x) => x !== w);
      reply({ ok: false, error: 'WriteConcernFailed', errmsg: 'waiting for replication timed out' });
    });
    this.waiters.push(w);
    this.wakeReadyWaiters();
  }

  status() {
    const members = {};
    for (const [id, m] of this.memberData) members[id] = { state: m.state, appliedOpTime: m.appliedOpTime };
    return {
      state: this.state,
      term: this.term,
      primary: this.primaryId,
      lastVote: this.lastVote,
      lastCommittedOpTime: this.lastCommittedOpTime,
      rbid: this.rbid,
      members,
    };
  }
}
