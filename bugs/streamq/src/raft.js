// raft.js — the stream's replication group, after nats-server's raft.go:
// a leader proposes entries, followers store them and answer with an
// appendEntryResponse, the leader commits an index once a quorum stored it,
// and every member hands committed entries to the stream (applyCommit).
// Leaders send empty appendEntry heartbeats; a leader that cannot hear a
// quorum for an election timeout steps down (lostQuorum).
// Membership: a peer is removed by an EntryRemovePeer entry. The leader drops
// the peer from its peer set as soon as it proposes the removal
// (doRemovePeerAsLeader); the other members drop it when the entry is applied.
// Members keep the peer set on disk (peers.idx) and start from it after a restart.
//
// Messages: AppendEntry, AppendEntryResponse, VoteRequest, VoteResponse.

export const Follower = 'FOLLOWER';
export const Candidate = 'CANDIDATE';
export const Leader = 'LEADER';

const maxAppendEntries = 50;

export class Raft {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {import('./filestore.js').FileStore} wal
   * @param {{ applyCommit(entry: any): void, stateChanged(): void }} sm
   */
  constructor(rt, wal, sm) {
    this.rt = rt;
    this.id = rt.id;
    const [lo, hi] = Array.isArray(rt.config.electionTimeoutMs) ? rt.config.electionTimeoutMs : [1200, 2400];
    this.minElectionTimeout = Number(lo);
    this.maxElectionTimeout = Number(hi);
    this.hbInterval = Number(rt.config.heartbeatMs ?? 200);
    this.wal = wal;
    this.sm = sm;

    const { entries, term, vote, members } = wal.load();
    /** The group's members, less the peers whose removal this leader has proposed. */
    this.members = members ?? [...rt.nodes];
    /** Peers whose removal this leader has proposed and not yet applied. */
    this.removing = new Set();
    this.adjustClusterSizeAndQuorum();
    /** @type {Array<{ index: number, term: number, data: any }>} */
    this.log = entries;
    /** The term of our last entry (NATS's n.pterm), kept beside the log so an AppendEntry at our tail needs no load. */
    this.pterm = this.termAt(this.pindex());
    this.term = term;
    this.vote = vote;
    this.commit = 0; // learned again from the leader after a restart
    this.applied = 0;
    this.state = Follower;
    this.leader = '';
    this.leaderFloor = 0;
    this.votes = new Set();
    /** @type {Map<string, { next: number, match: number, lastSeen: number }>} */
    this.peerState = new Map();
    this.resetElectionTimeout();
  }

  start() {
    this.rt.log.info('raft started', { term: this.term, vote: this.vote || null, pindex: this.pindex(), pterm: this.pterm });
    const loop = () => {
      this.tick();
      this.rt.setTimer(50, loop);
    };
    this.rt.setTimer(50, loop);
  }

  // ---- log ---------------------------------------------------------------

  pindex() {
    return this.log.length;
  }

  termAt(index) {
    if (index === 0) return 0;
    return this.log[index - 1]?.term;
  }

  entryAt(index) {
    return this.log[index - 1];
  }

  /** Appends entries to the log and the WAL, and moves pterm to the last one. */
  storeEntries(entries) {
    if (entries.length === 0) return;
    this.log.push(...entries);
    this.pterm = entries[entries.length - 1].term;
    this.wal.storeEntries(entries);
  }

  /** Drops the entry at index and everything after it. */
  truncateWAL(index) {
    this.rt.log.info('truncating log', { from: index, pindex: this.pindex(), applied: this.applied });
    this.log.length = index - 1;
    this.pterm = this.termAt(this.pindex());
  }

  setTerm(term, vote) {
    this.term = term;
    this.vote = vote;
    this.wal.writeTermVote(term, vote);
  }

  /** The peers we replicate to and count, and the quorum, from the members. */
  adjustClusterSizeAndQuorum() {
    this.peers = this.members.filter((p) => p !== this.id);
    this.qn = Math.floor(this.members.length / 2) + 1;
  }

  // ---- timers ------------------------------------------------------------

  resetElectionTimeout() {
    this.electAt = this.rt.now() + this.minElectionTimeout + this.rt.random() * (this.maxElectionTimeout - this.minElectionTimeout);
  }

  tick() {
    const now = this.rt.now();
    if (this.state !== Leader) {
      if (now >= this.electAt) this.switchToCandidate();
      return;
    }
    if (now - this.lastHeartbeat >= this.hbInterval) {
      this.lastHeartbeat = now;
      for (const p of this.peers) this.sendAppendEntry(p);
    }
    // With no peer left no response triggers a commit: the leader's own log is the quorum.
    if (this.peers.length === 0) this.checkCommit();
    let seen = 1;
    for (const ps of this.peerState.values()) if (now - ps.lastSeen < this.maxElectionTimeout) seen++;
    if (seen < this.qn && now - this.leaderSince > this.maxElectionTimeout) {
      this.rt.log.warn('lost quorum, stepping down', { term: this.term });
      this.switchToFollower(this.term, '');
    }
  }

  // ---- state changes ---------------------------------------------------------

  switchToFollower(term, leader) {
    const was = this.state;
    const changedLeader = leader !== this.leader;
    if (term > this.term) this.setTerm(term, '');
    this.state = Follower;
    this.leader = leader;
    // Removals we proposed count again until they are applied (or truncated).
    if (this.removing.size > 0) {
      this.members = this.rt.nodes.filter((p) => this.members.includes(p) || this.removing.has(p));
      this.removing.clear();
      this.adjustClusterSizeAndQuorum();
      this.wal.writePeerState(this.members);
    }
    this.resetElectionTimeout();
    if (was !== Follower || changedLeader) {
      this.rt.log.info('switched to follower', { term: this.term, leader: leader || null, pindex: this.pindex(), pterm: this.pterm, commit: this.commit });
      this.sm.stateChanged();
    }
  }

  switchToCandidate() {
    this.state = Candidate;
    this.leader = '';
    this.setTerm(this.term + 1, this.id);
    this.votes = new Set([this.id]);
    this.resetElectionTimeout();
    this.rt.log.info('switched to candidate', { term: this.term, pindex: this.pindex(), pterm: this.pterm });
    for (const p of this.peers) this.send(p, 'VoteRequest', { term: this.term, lastTerm: this.pterm, lastIndex: this.pindex(), candidate: this.id });
    // A group left with one member elects itself.
    if (this.votes.size >= this.qn) this.switchToLeader();
  }

  switchToLeader() {
    this.state = Leader;
    this.leader = this.id;
    const now = this.rt.now();
    this.leaderSince = now;
    this.lastHeartbeat = now;
    this.peerState = new Map(this.peers.map((p) => [p, { next: this.pindex() + 1, match: 0, lastSeen: now }]));
    this.rt.log.info('switched to leader', { term: this.term, pindex: this.pindex(), commit: this.commit });
    this.sm.stateChanged();
    // An entry of our own term lets us commit everything before it.
    this.leaderFloor = this.propose({ op: 'leader', id: this.id });
  }

  // ---- messages ------------------------------------------------------------

  send(to, type, body) {
    this.rt.send(to, type, body);
  }

  handle(from, type, m) {
    switch (type) {
      case 'AppendEntry':
        return this.processAppendEntry(from, m);
      case 'AppendEntryResponse':
        return this.processAppendEntryResponse(from, m);
      case 'VoteRequest':
        return this.processVoteRequest(from, m);
      case 'VoteResponse':
        return this.processVoteResponse(from, m);
    }
  }

  processVoteRequest(from, m) {
    // A removed server keeps campaigning; it must not disrupt the group it left.
    if (!this.members.includes(m.candidate)) {
      this.rt.log.debug('ignoring vote request from a removed peer', { from, term: m.term });
      return;
    }
    if (m.term > this.term) this.switchToFollower(m.term, '');
    const upToDate = m.lastTerm > this.pterm || (m.lastTerm === this.pterm && m.lastIndex >= this.pindex());
    const granted = m.term === this.term && (this.vote === '' || this.vote === m.candidate) && upToDate;
    if (granted) {
      this.setTerm(this.term, m.candidate);
      this.resetElectionTimeout();
    }
    this.rt.log.debug('vote request', { from, term: m.term, granted });
    this.send(from, 'VoteResponse', { term: this.term, granted });
  }

  processVoteResponse(from, m) {
    if (m.term > this.term) return this.switchToFollower(m.term, '');
    if (this.state !== Candidate || m.term !== this.term || !m.granted || !this.peers.includes(from)) return;
    this.votes.add(from);
    if (this.votes.size >= this.qn) this.switchToLeader();
  }

  processAppendEntry(from, ae) {
    if (ae.term < this.term) {
      this.send(from, 'AppendEntryResponse', { term: this.term, index: this.pindex(), success: false });
      return;
    }
    if (ae.term > this.term || this.state !== Follower || this.leader !== from) this.switchToFollower(ae.term, from);
    this.resetElectionTimeout();

    // The leader's previous entry is our last one when index and term both match; otherwise look
    // the entry up in the log.
    if ((ae.pindex !== this.pindex() || ae.pterm !== this.pterm) && (ae.pindex > this.pindex() || this.termAt(ae.pindex) !== ae.pterm)) {
      // Our log does not hold the leader's previous entry: the leader catches us up from our last entry, or from before the mismatch.
      const hint = Math.min(this.pindex(), ae.pindex - 1);
      this.rt.log.debug('append entry mismatch', { from, pindex: ae.pindex, pterm: ae.pterm, ours: this.termAt(ae.pindex) ?? null });
      this.send(from, 'AppendEntryResponse', { term: this.term, index: hint, success: false });
      return;
    }
    for (const e of ae.entries) {
      const have = this.termAt(e.index);
      if (have === e.term) continue;
      if (have !== undefined) this.truncateWAL(e.index);
      this.storeEntries([e]);
    }
    this.wal.flush();
    const last = ae.pindex + ae.entries.length;
    this.send(from, 'AppendEntryResponse', { term: this.term, index: last, success: true });
    if (ae.commit > this.commit) {
      this.commit = Math.min(ae.commit, last);
      this.applyCommits();
    }
  }

  processAppendEntryResponse(from, ar) {
    if (ar.term > this.term) return this.switchToFollower(ar.term, '');
    if (this.state !== Leader || ar.term !== this.term) return;
    const ps = this.peerState.get(from);
    if (!ps) return;
    ps.lastSeen = this.rt.now();
    if (!ar.success) {
      ps.next = Math.max(1, Math.min(ps.next - 1, ar.index + 1));
      this.sendAppendEntry(from);
      return;
    }
    if (ar.index > ps.match) ps.match = ar.index;
    ps.next = Math.max(ps.next, ar.index + 1);
    this.checkCommit();
    if (ps.next <= this.pindex()) this.sendAppendEntry(from);
  }

  sendAppendEntry(to) {
    const ps = this.peerState.get(to);
    const pindex = ps.next - 1;
    const entries = this.log.slice(pindex, pindex + maxAppendEntries);
    // Sent entries count as on their way: later sends (and heartbeats) go on from them, and a
    // follower that lacks them answers with its last index, from which we catch it up.
    ps.next = pindex + entries.length + 1;
    this.send(to, 'AppendEntry', { term: this.term, leader: this.id, pindex, pterm: this.termAt(pindex), commit: this.commit, entries });
  }

  checkCommit() {
    const matches = [this.pindex(), ...[...this.peerState.values()].map((p) => p.match)].sort((a, b) => b - a);
    const n = matches[this.qn - 1];
    if (n > this.commit && this.termAt(n) === this.term) {
      this.commit = n;
      this.applyCommits();
    }
  }

  applyCommits() {
    while (this.applied < this.commit) {
      const e = this.entryAt(this.applied + 1);
      this.applied = e.index;
      if (e.data.op === 'peer-remove') this.applyRemovePeer(e.data.peer);
      this.sm.applyCommit(e);
    }
  }

  applyRemovePeer(peer) {
    this.removing.delete(peer);
    this.removePeerLocked(peer);
    this.rt.log.info('removed peer', { peer, members: this.members });
  }

  /** The leader stops replicating to the peer and counting it for quorum as soon as its removal is proposed. */
  doRemovePeerAsLeader(peer) {
    this.removing.add(peer);
    this.removePeerLocked(peer);
  }

  /** Drops a peer from the peer set, which goes to peers.idx (nats-server's doRemovePeerLocked). */
  removePeerLocked(peer) {
    this.peerState.delete(peer);
    if (!this.members.includes(peer)) return;
    this.members = this.members.filter((p) => p !== peer);
    this.adjustClusterSizeAndQuorum();
    this.wal.writePeerState(this.members);
  }

  /** Whether the log holds a membership change that is not committed yet. */
  membershipChangeInProgress() {
    for (let i = this.commit + 1; i <= this.pindex(); i++) if (this.entryAt(i).data.op === 'peer-remove') return true;
    return false;
  }

  // ---- the stream's entry points ---------------------------------------------

  /** Appends an entry to the leader's log; returns its index, or 0 when not leader. */
  propose(data) {
    if (this.state !== Leader) return 0;
    const e = { index: this.pindex() + 1, term: this.term, data };
    this.storeEntries([e]);
    this.wal.flush();
    for (const [p, ps] of this.peerState) if (ps.next === e.index) this.sendAppendEntry(p);
    return e.index;
  }

  /** Proposes removing a peer from the group; returns the entry's index, or an error. */
  proposeRemovePeer(peer) {
    if (!this.isLeader()) return { error: 'not leader' };
    if (!this.members.includes(peer)) return { error: 'peer not a member' };
    if (peer === this.id) return { error: 'cannot remove the leader' };
    // Changes go one at a time: quorums of the old and new peer sets overlap only for a single change.
    if (this.membershipChangeInProgress()) return { error: 'membership change in progress' };
    const index = this.propose({ op: 'peer-remove', peer });
    this.doRemovePeerAsLeader(peer);
    this.rt.log.info('proposed peer removal', { peer, index, peers: this.peers, quorum: this.qn });
    return { index };
  }

  stepDown() {
    if (this.state !== Leader) return false;
    this.rt.log.info('stepping down on request', { term: this.term });
    this.switchToFollower(this.term, '');
    // Sit out one election so another member takes over.
    this.electAt = this.rt.now() + 2 * this.maxElectionTimeout;
    return true;
  }

  /**
   * Leader completeness (nats-server#6485): a new leader serves requests only once it has applied
   * everything its log held when it was elected, so the stream and dedupe map it answers from are whole.
   */
  isLeader() {
    return this.state === Leader && this.applied >= this.leaderFloor;
  }
}
