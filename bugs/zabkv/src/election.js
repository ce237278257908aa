// election.js — after ZooKeeper's FastLeaderElection. A LOOKING peer proposes
// itself, adopts any better vote it hears — ordered by (peerEpoch, zxid, sid) —
// and re-broadcasts. Once a quorum of the votes of its electionEpoch match its
// own proposal and nothing better arrives within finalizeWait, the election
// ends. A peer that is FOLLOWING or LEADING answers notifications with its
// current vote; a LOOKING peer follows a peer that says it is LEADING, and
// leads if a quorum (itself included) already names it as leader.

export function totalOrderPredicate(a, b) {
  // true if vote a is better than vote b
  if (a.peerEpoch !== b.peerEpoch) return a.peerEpoch > b.peerEpoch;
  if (a.zxid !== b.zxid) return a.zxid > b.zxid;
  return a.leader > b.leader;
}

export class FastLeaderElection {
  /** @param {any} peer the QuorumPeer */
  constructor(peer) {
    this.peer = peer;
    this.rt = peer.rt;
    this.logicalclock = 0;
    this.proposal = null;
    /** @type {Map<string, any>} votes of this electionEpoch */
    this.recvset = new Map();
    /** @type {Map<string, string>} leaders named by peers that are FOLLOWING or LEADING */
    this.outofelection = new Map();
    this.timer = null;
    this.finalizing = null;
  }

  lookForLeader() {
    this.logicalclock += 1;
    this.recvset.clear();
    this.outofelection.clear();
    this.proposal = { leader: this.rt.id, zxid: this.peer.getLastLoggedZxid(), peerEpoch: this.peer.currentEpoch };
    this.recvset.set(this.rt.id, this.proposal);
    this.sendNotifications();
    this.schedule();
  }

  stop() {
    this.timer?.cancel();
    this.finalizing?.cancel();
    this.timer = this.finalizing = null;
  }

  schedule() {
    this.timer?.cancel();
    this.timer = this.rt.setTimer(this.peer.notifyMs, () => {
      this.sendNotifications();
      this.schedule();
    });
  }

  notification(state) {
    const v = this.peer.state === 'LOOKING' ? this.proposal : this.peer.currentVote;
    return { ...v, electionEpoch: this.logicalclock, state };
  }

  sendNotifications() {
    for (const sid of this.rt.nodes) if (sid !== this.rt.id) this.rt.send(sid, 'NOTIFICATION', this.notification('LOOKING'));
  }

  /** A notification from another peer, whatever our state. */
  receive(from, n) {
    if (this.peer.state !== 'LOOKING') {
      if (n.state === 'LOOKING') this.rt.send(from, 'NOTIFICATION', this.notification(this.peer.state));
      return;
    }
    if (n.state === 'LEADING' && n.leader === from) {
      this.rt.log.info('notification from leader', { from, peerEpoch: n.peerEpoch });
      this.finish({ leader: from, zxid: n.zxid, peerEpoch: n.peerEpoch });
      return;
    }
    if (n.state !== 'LOOKING') {
      // A peer that already follows this one: with a quorum of such votes, lead.
      this.outofelection.set(from, n.leader);
      const forMe = [...this.outofelection.values()].filter((l) => l === this.rt.id).length + 1;
      if (n.leader === this.rt.id && forMe >= this.peer.quorum()) this.finish({ leader: this.rt.id, zxid: this.peer.getLastLoggedZxid(), peerEpoch: this.peer.currentEpoch });
      return;
    }
    const vote = { leader: n.leader, zxid: n.zxid, peerEpoch: n.peerEpoch };
    if (n.electionEpoch > this.logicalclock) {
      this.logicalclock = n.electionEpoch;
      this.recvset.clear();
      const mine = { leader: this.rt.id, zxid: this.peer.getLastLoggedZxid(), peerEpoch: this.peer.currentEpoch };
      this.proposal = totalOrderPredicate(vote, mine) ? vote : mine;
      this.sendNotifications();
    } else if (n.electionEpoch < this.logicalclock) {
      this.rt.send(from, 'NOTIFICATION', this.notification('LOOKING'));
      return;
    } else if (totalOrderPredicate(vote, this.proposal)) {
      this.proposal = vote;
      this.sendNotifications();
    }
    this.recvset.set(from, vote);
    this.recvset.set(this.rt.id, this.proposal);
    const agree = [...this.recvset.values()].filter((v) => sameVote(v, this.proposal)).length;
    if (agree >= this.peer.quorum() && !this.finalizing) {
      this.finalizing = this.rt.setTimer(this.peer.finalizeWaitMs, () => {
        this.finalizing = null;
        const now = [...this.recvset.values()].filter((v) => sameVote(v, this.proposal)).length;
        if (this.peer.state === 'LOOKING' && now >= this.peer.quorum()) this.finish(this.proposal);
      });
    }
  }

  finish(vote) {
    this.stop();
    this.peer.electionDone(vote, this.logicalclock);
  }
}

function sameVote(a, b) {
  return a.leader === b.leader && a.zxid === b.zxid && a.peerEpoch === b.peerEpoch;
}
