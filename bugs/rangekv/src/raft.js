// raft.js — one range's consensus group, after etcd/raft as CockroachDB and
// TiKV embed it: elections, MsgApp replication, commit by quorum, leader
// transfer (MsgTimeoutNow) and ReadIndex for follower reads. The group owns
// its log and HardState on disk (written and synced before any message that
// depends on them); the replica drives it with ticks and messages.
//
// Messages: MsgApp/MsgAppResp, MsgHeartbeat/MsgHeartbeatResp, MsgVote/MsgVoteResp,
// MsgTimeoutNow.

export const StateFollower = 'follower';
export const StateCandidate = 'candidate';
export const StateLeader = 'leader';

export class RawNode {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {number} rangeId
   * @param {{ electionTicks: number, heartbeatTicks: number }} cfg
   * @param {(to: string, type: string, body: any) => void} send
   */
  constructor(rt, rangeId, cfg, send) {
    this.rt = rt;
    this.id = rt.id;
    this.rangeId = rangeId;
    this.peers = rt.nodes.filter((n) => n !== rt.id);
    this.quorum = Math.floor(rt.nodes.length / 2) + 1;
    this.cfg = cfg;
    this.send = send;
    this.logFile = `raft/r${rangeId}/log`;
    this.hsFile = `raft/r${rangeId}/hardstate`;
    const hs = JSON.parse(rt.disk.read(this.hsFile) ?? '{"term":0,"vote":""}');
    this.term = hs.term;
    this.vote = hs.vote;
    /** @type {Array<{ index: number, term: number, data: any }>} */
    this.log = [];
    for (const line of (rt.disk.read(this.logFile) ?? '').split('\n')) {
      if (!line) continue;
      const e = JSON.parse(line);
      this.log.length = e.index - 1;
      this.log.push(e);
    }
    this.committed = 0;
    this.state = StateFollower;
    this.lead = '';
    this.votes = new Set();
    /** @type {Map<string, { match: number, next: number, active: boolean }>} */
    this.prs = new Map();
    this.leadTransferee = '';
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.resetRandomizedElectionTimeout();
  }

  lastIndex() {
    return this.log.length;
  }

  termAt(i) {
    return i === 0 ? 0 : this.log[i - 1]?.term;
  }

  entry(i) {
    return this.log[i - 1];
  }

  saveHardState() {
    this.rt.disk.write(this.hsFile, JSON.stringify({ term: this.term, vote: this.vote }));
    this.rt.disk.sync();
  }

  appendToStorage(entries, truncatedFrom = 0) {
    if (truncatedFrom) this.rt.disk.write(this.logFile, this.log.map((e) => JSON.stringify(e) + '\n').join(''));
    else if (entries.length) this.rt.disk.append(this.logFile, entries.map((e) => JSON.stringify(e) + '\n').join(''));
    this.rt.disk.sync();
  }

  resetRandomizedElectionTimeout() {
    this.randomizedElectionTimeout = this.cfg.electionTicks + Math.floor(this.rt.random() * this.cfg.electionTicks);
  }

  // ---- ticks -------------------------------------------------------------

  tick() {
    this.electionElapsed++;
    if (this.state !== StateLeader) {
      if (this.electionElapsed >= this.randomizedElectionTimeout) this.campaign(false);
      return;
    }
    if (++this.heartbeatElapsed >= this.cfg.heartbeatTicks) {
      this.heartbeatElapsed = 0;
      for (const p of this.peers) this.send(p, 'MsgHeartbeat', { term: this.term, commit: Math.min(this.prs.get(p).match, this.committed) });
    }
    if (this.electionElapsed >= this.cfg.electionTicks) {
      this.electionElapsed = 0;
      this.leadTransferee = '';
      let active = 1;
      for (const pr of this.prs.values()) {
        if (pr.active) active++;
        pr.active = false;
      }
      if (active < this.quorum) this.becomeFollower(this.term, '');
    }
  }

  // ---- roles -------------------------------------------------------------

  becomeFollower(term, lead) {
    const was = this.state;
    if (term > this.term) {
      this.term = term;
      this.vote = '';
      this.saveHardState();
    }
    const changed = was !== StateFollower || lead !== this.lead;
    this.state = StateFollower;
    this.lead = lead;
    this.leadTransferee = '';
    this.electionElapsed = 0;
    this.resetRandomizedElectionTimeout();
    if (changed) this.rt.log.info('became follower', { range: this.rangeId, term: this.term, leader: lead || null });
  }

  campaign(transfer) {
    this.state = StateCandidate;
    this.lead = '';
    this.term++;
    this.vote = this.id;
    this.saveHardState();
    this.votes = new Set([this.id]);
    this.electionElapsed = 0;
    this.resetRandomizedElectionTimeout();
    this.rt.log.info('campaign', { range: this.rangeId, term: this.term, transfer });
    const last = this.lastIndex();
    // A transfer's campaign is forced: voters grant it even while they still follow a leader.
    for (const p of this.peers) this.send(p, 'MsgVote', { term: this.term, index: last, logTerm: this.termAt(last), force: transfer });
  }

  becomeLeader() {
    this.state = StateLeader;
    this.lead = this.id;
    this.leadTransferee = '';
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.prs = new Map(this.peers.map((p) => [p, { match: 0, next: this.lastIndex() + 1, active: true }]));
    this.rt.log.info('became leader', { range: this.rangeId, term: this.term, index: this.lastIndex() });
    this.propose({ op: 'noop' });
  }

  // ---- messages ------------------------------------------------------------

  /** Whether this replica heard from a live leader within the election timeout (etcd's inLease, with CheckQuorum). */
  inLeaderLease() {
    return this.lead !== '' && this.electionElapsed < this.cfg.electionTicks;
  }

  step(from, type, m) {
    if (type === 'MsgVote' && m.term > this.term && !m.force && this.inLeaderLease()) {
      // Leader stickiness (raft §6 / etcd CheckQuorum): while a leader is known to be alive, a vote
      // request does not bump our term and is not granted.
      this.rt.log.info('ignored vote: lease is not expired', { range: this.rangeId, from, term: m.term, leader: this.lead, remainingTicks: this.cfg.electionTicks - this.electionElapsed });
      return;
    }
    if (m.term > this.term) {
      const lead = type === 'MsgApp' || type === 'MsgHeartbeat' || type === 'MsgTimeoutNow' ? from : '';
      this.becomeFollower(m.term, lead);
    } else if (m.term < this.term) {
      if (type === 'MsgApp' || type === 'MsgHeartbeat') this.send(from, 'MsgAppResp', { term: this.term, index: 0, reject: true });
      return;
    }
    switch (type) {
      case 'MsgVote': {
        const last = this.lastIndex();
        const upToDate = m.logTerm > this.termAt(last) || (m.logTerm === this.termAt(last) && m.index >= last);
        const grant = (this.vote === '' || this.vote === from) && upToDate;
        if (grant) {
          this.vote = from;
          this.saveHardState();
          this.electionElapsed = 0;
        }
        return this.send(from, 'MsgVoteResp', { term: this.term, reject: !grant });
      }
      case 'MsgVoteResp':
        if (this.state !== StateCandidate || m.reject) return;
        this.votes.add(from);
        if (this.votes.size >= this.quorum) this.becomeLeader();
        return;
      case 'MsgApp':
        if (this.state !== StateFollower || this.lead !== from) this.becomeFollower(this.term, from);
        this.electionElapsed = 0;
        return this.handleAppendEntries(from, m);
      case 'MsgHeartbeat':
        this.electionElapsed = 0;
        if (this.lead !== from) this.becomeFollower(this.term, from);
        if (m.commit > this.committed) this.committed = Math.min(m.commit, this.lastIndex());
        return this.send(from, 'MsgHeartbeatResp', { term: this.term });
      case 'MsgAppResp':
      case 'MsgHeartbeatResp':
        return this.handleResponse(from, type, m);
      case 'MsgTimeoutNow':
        if (this.state !== StateLeader) this.campaign(true);
        return;
    }
  }

  handleAppendEntries(from, m) {
    if (m.index < this.committed) return this.send(from, 'MsgAppResp', { term: this.term, index: this.committed });
    if (this.termAt(m.index) !== m.logTerm) {
      return this.send(from, 'MsgAppResp', { term: this.term, index: m.index, reject: true, hint: Math.min(this.lastIndex(), m.index - 1) });
    }
    let fresh = [];
    let truncatedFrom = 0;
    for (let i = 0; i < m.entries.length; i++) {
      const e = m.entries[i];
      if (this.termAt(e.index) === e.term) continue;
      if (e.index <= this.lastIndex()) truncatedFrom = e.index;
      this.log.length = e.index - 1;
      fresh = m.entries.slice(i);
      this.log.push(...fresh);
      break;
    }
    this.appendToStorage(fresh, truncatedFrom);
    const last = m.index + m.entries.length;
    if (m.commit > this.committed) this.committed = Math.min(m.commit, last);
    this.send(from, 'MsgAppResp', { term: this.term, index: last });
  }

  handleResponse(from, type, m) {
    if (this.state !== StateLeader) return;
    const pr = this.prs.get(from);
    if (!pr) return;
    pr.active = true;
    if (type === 'MsgHeartbeatResp') {
      if (pr.match < this.lastIndex()) this.sendAppend(from);
      return;
    }
    if (m.reject) {
      if (m.hint !== undefined) pr.next = Math.max(1, Math.min(pr.next - 1, m.hint + 1));
      return this.sendAppend(from);
    }
    if (m.index > pr.match) pr.match = m.index;
    pr.next = Math.max(pr.next, m.index + 1);
    this.maybeCommit();
    if (from === this.leadTransferee && pr.match === this.lastIndex()) this.send(from, 'MsgTimeoutNow', { term: this.term });
    if (pr.next <= this.lastIndex()) this.sendAppend(from);
  }

  sendAppend(to) {
    const pr = this.prs.get(to);
    const prev = pr.next - 1;
    const entries = this.log.slice(prev, prev + 64);
    this.send(to, 'MsgApp', { term: this.term, index: prev, logTerm: this.termAt(prev), entries, commit: this.committed });
  }

  /** Whether the leader has committed an entry of its own term (raft-rs: commit_to_current_term). */
  committedToCurrentTerm() {
    return this.termAt(this.committed) === this.term;
  }

  maybeCommit() {
    const matches = [this.lastIndex(), ...[...this.prs.values()].map((p) => p.match)].sort((a, b) => b - a);
    const n = matches[this.quorum - 1];
    if (n > this.committed && this.termAt(n) === this.term) this.committed = n;
  }

  // ---- entry points --------------------------------------------------------

  propose(data) {
    if (this.state !== StateLeader || this.leadTransferee) return 0;
    const e = { index: this.lastIndex() + 1, term: this.term, data };
    this.log.push(e);
    this.appendToStorage([e]);
    for (const [p, pr] of this.prs) if (pr.next === e.index) this.sendAppend(p);
    return e.index;
  }

  transferLeader(to) {
    const pr = this.prs.get(to);
    if (this.state !== StateLeader || !pr) return false;
    this.leadTransferee = to;
    this.electionElapsed = 0;
    this.rt.log.info('transferring leadership', { range: this.rangeId, term: this.term, to });
    if (pr.match === this.lastIndex()) this.send(to, 'MsgTimeoutNow', { term: this.term });
    else this.sendAppend(to);
    return true;
  }
}
