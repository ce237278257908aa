// raft.js — the Raft consensus state machine, after etcd's raft package:
// PreVote, CheckQuorum, leader transfer (MsgTimeoutNow), log replication with
// probing, commit by quorum match, and membership changes applied from
// committed ConfChange entries (one at a time). Everything that must survive a crash (the
// HardState and new entries) is written to the WAL and synced before the
// message that depends on it is sent.
//
// Messages: MsgApp/MsgAppResp, MsgHeartbeat/MsgHeartbeatResp,
// MsgPreVote/MsgPreVoteResp, MsgVote/MsgVoteResp, MsgTimeoutNow.

const None = '';
export const StateFollower = 'follower';
export const StatePreCandidate = 'pre-candidate';
export const StateCandidate = 'candidate';
export const StateLeader = 'leader';

const maxMsgEntries = 64;

export class Raft {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {import('./wal.js').WAL} wal
   * @param {{ onCommit(): void, onStateChange(): void }} hooks
   * @param {string[]} voters the members of the cluster's configuration
   */
  constructor(rt, wal, hooks, voters) {
    this.rt = rt;
    this.id = rt.id;
    this.setVoters(voters);
    const cfg = rt.config;
    const [lo, hi] = Array.isArray(cfg.electionTimeoutMs) ? cfg.electionTimeoutMs : [1000, 2000];
    this.electionTimeout = Number(lo);
    this.electionTimeoutMax = Number(hi);
    this.heartbeatTimeout = Number(cfg.heartbeatMs ?? 100);
    this.tickMs = Number(cfg.tickMs ?? 25);
    this.preVote = cfg.preVote !== false;
    this.checkQuorum = cfg.checkQuorum !== false;
    this.wal = wal;
    this.hooks = hooks;

    const { hardState, entries } = wal.readAll();
    this.term = hardState.term;
    this.vote = hardState.vote;
    this.commit = hardState.commit;
    this.persisted = { ...hardState };
    /** @type {Array<{ index: number, term: number, data: any }>} log[i - 1] holds index i */
    this.log = entries;

    this.state = StateFollower;
    this.lead = None;
    /** @type {Map<string, boolean>} */
    this.votes = new Map();
    /** @type {Map<string, { match: number, next: number, recentActive: boolean }>} */
    this.prs = new Map();
    this.leadTransferee = None;
    this.transferStart = 0;
    this.heartbeatAt = 0;
    this.stopped = false;
    this.resetElectionTimer();
  }

  start() {
    this.rt.log.info('raft started', { term: this.term, vote: this.vote, commit: this.commit, index: this.lastIndex(), voters: this.voters });
    const loop = () => {
      if (this.stopped) return;
      this.tick();
      this.rt.setTimer(this.tickMs, loop);
    };
    this.rt.setTimer(this.tickMs, loop);
  }

  // ---- log -------------------------------------------------------------

  lastIndex() {
    return this.log.length;
  }

  lastTerm() {
    return this.termAt(this.lastIndex());
  }

  termAt(i) {
    if (i === 0) return 0;
    return this.log[i - 1]?.term;
  }

  entry(i) {
    return this.log[i - 1];
  }

  isUpToDate(index, logTerm) {
    return logTerm > this.lastTerm() || (logTerm === this.lastTerm() && index >= this.lastIndex());
  }

  /** Writes the HardState (if it changed) and new entries to the WAL and syncs. */
  persist(entries = []) {
    const hs = { term: this.term, vote: this.vote, commit: this.commit };
    const p = this.persisted;
    const changed = hs.term !== p.term || hs.vote !== p.vote || hs.commit !== p.commit;
    if (!changed && entries.length === 0) return;
    this.wal.save(changed ? hs : null, entries);
    this.persisted = hs;
  }

  commitTo(index) {
    if (index <= this.commit) return;
    this.commit = Math.min(index, this.lastIndex());
  }

  // ---- configuration ---------------------------------------------------

  setVoters(voters) {
    this.voters = [...voters].sort();
    this.peers = this.voters.filter((n) => n !== this.id);
    this.quorum = Math.floor(this.voters.length / 2) + 1;
  }

  /** Only a member of the configuration campaigns and counts itself in a quorum. */
  promotable() {
    return this.voters.includes(this.id);
  }

  /** Applies a committed ConfChange: the new voters take effect at once. */
  applyConfChange(voters) {
    this.setVoters(voters);
    this.rt.log.info('applied conf change', { term: this.term, voters: this.voters });
    if (this.state !== StateLeader) return;
    for (const p of this.prs.keys()) if (!this.peers.includes(p)) this.prs.delete(p);
    for (const p of this.peers) {
      if (this.prs.has(p)) continue;
      this.prs.set(p, { match: 0, next: this.lastIndex() + 1, recentActive: true });
      this.sendAppend(p);
    }
    this.maybeCommit();
  }

  /** Stops the state machine for good: no ticks, no messages, no proposals. */
  stop() {
    if (this.state === StateLeader) this.becomeFollower(this.term, None);
    this.stopped = true;
  }

  // ---- timers ----------------------------------------------------------

  resetElectionTimer() {
    this.electionStart = this.rt.now();
    this.randomizedElectionTimeout =
      this.electionTimeout + Math.floor(this.rt.random() * (this.electionTimeoutMax - this.electionTimeout));
  }

  /** True while this node has heard from a leader within the election timeout. */
  inLease() {
    return this.checkQuorum && this.lead !== None && this.rt.now() - this.electionStart < this.electionTimeout;
  }

  tick() {
    const now = this.rt.now();
    if (this.state !== StateLeader) {
      if (now - this.electionStart >= this.randomizedElectionTimeout) {
        if (this.promotable()) this.hup(false);
        else this.resetElectionTimer();
      }
      return;
    }
    if (now - this.heartbeatAt >= this.heartbeatTimeout) {
      this.heartbeatAt = now;
      this.bcastHeartbeat();
    }
    if (this.leadTransferee !== None && now - this.transferStart >= this.electionTimeout) {
      this.rt.log.info('leader transfer aborted', { term: this.term, to: this.leadTransferee });
      this.leadTransferee = None;
    }
    if (now - this.electionStart >= this.electionTimeout) {
      this.electionStart = now;
      if (this.checkQuorum) {
        let active = this.promotable() ? 1 : 0;
        for (const pr of this.prs.values()) {
          if (pr.recentActive) active++;
          pr.recentActive = false;
        }
        if (active < this.quorum) {
          this.rt.log.warn('stepped down: quorum not active', { term: this.term, active });
          this.becomeFollower(this.term, None);
        }
      }
    }
  }

  // ---- state transitions -----------------------------------------------

  becomeFollower(term, lead) {
    const changed = this.state !== StateFollower || term !== this.term || lead !== this.lead;
    const wasLeader = this.state === StateLeader;
    if (term !== this.term) {
      this.term = term;
      this.vote = None;
      this.persist();
    }
    this.state = StateFollower;
    this.lead = lead;
    this.leadTransferee = None;
    this.resetElectionTimer();
    if (changed) {
      this.rt.log.info('became follower', { term: this.term, leader: lead || null, index: this.lastIndex() });
      if (wasLeader || lead) this.hooks.onStateChange();
    }
  }

  becomePreCandidate() {
    this.state = StatePreCandidate;
    this.lead = None;
    this.votes = new Map();
    this.resetElectionTimer();
  }

  becomeCandidate() {
    this.state = StateCandidate;
    this.lead = None;
    this.term += 1;
    this.vote = this.id;
    this.votes = new Map();
    this.resetElectionTimer();
    this.persist();
  }

  becomeLeader() {
    this.state = StateLeader;
    this.lead = this.id;
    this.leadTransferee = None;
    this.prs = new Map(this.peers.map((p) => [p, { match: 0, next: this.lastIndex() + 1, recentActive: true }]));
    this.electionStart = this.rt.now();
    this.heartbeatAt = this.rt.now();
    this.rt.log.info('became leader', { term: this.term, index: this.lastIndex(), commit: this.commit });
    this.hooks.onStateChange();
    for (const p of this.peers) this.sendAppend(p);
  }

  hup(transfer) {
    if (this.state === StateLeader) return;
    if (this.preVote && !transfer) this.campaign('pre-election');
    else this.campaign(transfer ? 'transfer' : 'election');
  }

  campaign(kind) {
    let type, term;
    if (kind === 'pre-election') {
      this.becomePreCandidate();
      type = 'MsgPreVote';
      term = this.term + 1;
    } else {
      this.becomeCandidate();
      type = 'MsgVote';
      term = this.term;
    }
    this.rt.log.info('campaign', { kind, term, index: this.lastIndex(), logTerm: this.lastTerm() });
    if (this.poll(this.id, true)) return;
    for (const p of this.peers) {
      this.send(p, type, { term, index: this.lastIndex(), logTerm: this.lastTerm(), force: kind === 'transfer' });
    }
  }

  /** Records a (pre-)vote; returns true once the (pre-)election is decided. */
  poll(from, granted) {
    this.votes.set(from, granted);
    let yes = 0;
    let no = 0;
    for (const v of this.votes.values()) v ? yes++ : no++;
    if (yes >= this.quorum) {
      if (this.state === StatePreCandidate) this.campaign('election');
      else this.becomeLeader();
      return true;
    }
    if (no >= this.quorum) {
      this.becomeFollower(this.term, None);
      return true;
    }
    return false;
  }

  // ---- messages ----------------------------------------------------------

  send(to, type, body) {
    this.rt.send(to, type, body);
  }

  step(from, type, m) {
    if (this.stopped) return;
    if (m.term > this.term) {
      if ((type === 'MsgVote' || type === 'MsgPreVote') && !m.force && this.inLease()) {
        this.rt.log.debug('ignored vote request while in lease', { term: this.term, from, type, msgTerm: m.term });
        return;
      }
      if (type === 'MsgPreVote' || (type === 'MsgPreVoteResp' && !m.reject)) {
        // A pre-vote, and a granted answer to ours, carry a future term: they never move ours.
        // A rejection carries the rejecter's term, which we adopt below.
      } else {
        const lead = type === 'MsgApp' || type === 'MsgHeartbeat' ? from : None;
        this.becomeFollower(m.term, lead);
      }
    } else if (m.term < this.term) {
      if (type === 'MsgApp' || type === 'MsgHeartbeat') {
        // Tell a stale leader about the newer term so it steps down.
        this.send(from, 'MsgAppResp', { term: this.term, index: 0 });
      } else if (type === 'MsgPreVote') {
        // Reject a stale pre-candidate with our term, so it can catch up.
        this.send(from, 'MsgPreVoteResp', { term: this.term, reject: true });
      }
      return;
    }

    if (type === 'MsgVote' || type === 'MsgPreVote') {
      const canVote =
        this.vote === from || (this.vote === None && this.lead === None) || (type === 'MsgPreVote' && m.term > this.term);
      const respType = type === 'MsgVote' ? 'MsgVoteResp' : 'MsgPreVoteResp';
      if (canVote && this.isUpToDate(m.index, m.logTerm)) {
        if (type === 'MsgVote') {
          this.vote = from;
          this.resetElectionTimer();
          this.persist();
        }
        this.rt.log.info('granted vote', { term: m.term, to: from, type, index: this.lastIndex() });
        this.send(from, respType, { term: m.term, reject: false });
      } else {
        this.rt.log.info('rejected vote', { term: this.term, to: from, type, msgTerm: m.term, index: this.lastIndex() });
        this.send(from, respType, { term: this.term, reject: true });
      }
      return;
    }

    if (this.state === StateLeader) this.stepLeader(from, type, m);
    else if (this.state === StateFollower) this.stepFollower(from, type, m);
    else this.stepCandidate(from, type, m);
  }

  stepLeader(from, type, m) {
    const pr = this.prs.get(from);
    if (!pr) return;
    pr.recentActive = true;
    if (type === 'MsgAppResp') {
      if (m.reject) {
        pr.next = Math.max(1, Math.min(m.index, m.rejectHint + 1));
        this.sendAppend(from);
        return;
      }
      if (m.index > pr.match) {
        pr.match = m.index;
        pr.next = Math.max(pr.next, m.index + 1);
        this.maybeCommit();
      }
      if (pr.next <= this.lastIndex()) this.sendAppend(from);
      else if (from === this.leadTransferee && pr.match === this.lastIndex()) this.sendTimeoutNow(from);
    } else if (type === 'MsgHeartbeatResp') {
      if (pr.match < this.lastIndex()) {
        pr.next = pr.match + 1;
        this.sendAppend(from);
      }
    }
  }

  stepCandidate(from, type, m) {
    const respType = this.state === StatePreCandidate ? 'MsgPreVoteResp' : 'MsgVoteResp';
    if (type === 'MsgApp' || type === 'MsgHeartbeat') {
      this.becomeFollower(m.term, from);
      this.stepFollower(from, type, m);
    } else if (type === respType) {
      this.poll(from, !m.reject);
    }
  }

  stepFollower(from, type, m) {
    if (type === 'MsgApp') {
      this.electionStart = this.rt.now();
      this.lead = from;
      this.handleAppendEntries(from, m);
    } else if (type === 'MsgHeartbeat') {
      this.electionStart = this.rt.now();
      this.lead = from;
      const before = this.commit;
      this.commitTo(m.commit);
      this.persist();
      this.send(from, 'MsgHeartbeatResp', { term: this.term });
      if (this.commit > before) this.hooks.onCommit();
    } else if (type === 'MsgTimeoutNow' && this.promotable()) {
      this.rt.log.info('received MsgTimeoutNow', { term: this.term, from });
      this.hup(true);
    }
  }

  handleAppendEntries(from, m) {
    if (m.index < this.commit) {
      this.send(from, 'MsgAppResp', { term: this.term, index: this.commit });
      return;
    }
    if (this.termAt(m.index) !== m.logTerm) {
      this.send(from, 'MsgAppResp', { term: this.term, index: m.index, reject: true, rejectHint: this.lastIndex() });
      return;
    }
    const lastNew = m.index + m.entries.length;
    let fresh = [];
    for (let i = 0; i < m.entries.length; i++) {
      const e = m.entries[i];
      if (this.termAt(e.index) === e.term) continue;
      if (e.index <= this.commit) throw new Error(`entry ${e.index} conflicts with committed entry`);
      this.log.length = e.index - 1;
      fresh = m.entries.slice(i);
      this.log.push(...fresh);
      break;
    }
    const before = this.commit;
    this.commitTo(Math.min(m.commit, lastNew));
    this.persist(fresh);
    this.send(from, 'MsgAppResp', { term: this.term, index: lastNew });
    if (this.commit > before) this.hooks.onCommit();
  }

  sendAppend(to) {
    const pr = this.prs.get(to);
    const prev = pr.next - 1;
    const entries = this.log.slice(prev, prev + maxMsgEntries);
    this.send(to, 'MsgApp', { term: this.term, index: prev, logTerm: this.termAt(prev), entries, commit: this.commit });
    pr.next = prev + entries.length + 1;
  }

  bcastHeartbeat() {
    for (const [p, pr] of this.prs) this.send(p, 'MsgHeartbeat', { term: this.term, commit: Math.min(pr.match, this.commit) });
  }

  sendTimeoutNow(to) {
    this.rt.log.info('sent MsgTimeoutNow', { term: this.term, to });
    this.send(to, 'MsgTimeoutNow', { term: this.term });
  }

  maybeCommit() {
    const matches = this.voters.map((v) => (v === this.id ? this.lastIndex() : (this.prs.get(v)?.match ?? 0))).sort((a, b) => b - a);
    const n = matches[this.quorum - 1];
    if (n > this.commit && this.termAt(n) === this.term) {
      this.commit = n;
      this.persist();
      this.hooks.onCommit();
    }
  }

  // ---- the server's entry points -------------------------------------------

  /** Appends a proposal to the leader's log; returns its index and term, or null. */
  propose(data) {
    if (this.stopped || this.state !== StateLeader || this.leadTransferee !== None || !this.promotable()) return null;
    const ent = { index: this.lastIndex() + 1, term: this.term, data };
    this.log.push(ent);
    this.persist([ent]);
    for (const [p, pr] of this.prs) if (pr.next === ent.index) this.sendAppend(p);
    if (this.prs.size === 0) this.maybeCommit();
    return { index: ent.index, term: ent.term };
  }

  transferLeader(to) {
    if (this.state !== StateLeader) return 'not leader';
    if (to === this.id) return null;
    const pr = this.prs.get(to);
    if (!pr) return 'unknown member';
    this.rt.log.info('transferring leadership', { term: this.term, to });
    this.leadTransferee = to;
    this.transferStart = this.rt.now();
    if (pr.match === this.lastIndex()) this.sendTimeoutNow(to);
    else this.sendAppend(to);
    return null;
  }

  isLeader() {
    return this.state === StateLeader;
  }
}
