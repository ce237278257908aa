// leader.js — after ZooKeeper's Leader and LearnerHandler. The leader first
// gathers a quorum of FOLLOWERINFO to pick a new epoch (LEADERINFO /
// ACKEPOCH), then brings each learner up to date from its committedLog with a
// DIFF, a TRUNC or a SNAP followed by NEWLEADER. Once a quorum has acked
// NEWLEADER the leader starts serving and sends UPTODATE. In the broadcast
// phase every write is logged, sent as a PROPOSAL, and committed in zxid order
// once a quorum has ACKed it.

import { hexZxid, makeZxid } from './zkdatabase.js';

class LearnerHandler {
  constructor(sid, conn, acceptedEpoch, now) {
    this.sid = sid;
    this.conn = conn;
    this.acceptedEpoch = acceptedEpoch;
    this.lastHeard = now;
    /** epoch → (waiting for quorum) → syncing → synced */
    this.state = 'epoch';
    this.peerLastZxid = null;
    this.syncedUpTo = 0;
  }
}

export class Leader {
  /** @param {any} peer the QuorumPeer */
  constructor(peer) {
    this.peer = peer;
    this.rt = peer.rt;
    this.zk = peer.zkDb;
    /** @type {Map<string, LearnerHandler>} */
    this.learners = new Map();
    this.connecting = new Set([this.rt.id]);
    this.epochAcks = new Set([this.rt.id]);
    this.newLeaderAcks = new Set([this.rt.id]);
    this.newEpoch = null;
    this.epochSettled = false;
    this.serving = false;
    /** @type {Map<number, { txn: any, acks: Set<string> }>} outstanding proposals, in zxid order */
    this.outstanding = new Map();
    this.counter = 0;
    this.lastProposed = 0;
    this.cxid = 0;
    /** @type {Map<number, (res: any) => void>} */
    this.pending = new Map();
    /** @type {Array<{ after: number, done: () => void }>} */
    this.syncs = [];
    this.timer = null;
    /** @type {Map<string, { closing: boolean }>} the leader's SessionTrackerImpl: sessions as of the last prepared request */
    this.sessionTracker = new Map();
  }

  start() {
    this.startedAt = this.rt.now();
    this.tick();
  }

  shutdown() {
    this.timer?.cancel();
    this.serving = false;
    for (const done of this.pending.values()) done({ ok: false, error: 'connection loss' });
    this.pending.clear();
  }

  outstandingCount() {
    return this.outstanding.size;
  }

  tick() {
    const now = this.rt.now();
    for (const h of this.learners.values()) this.send(h, 'PING', {});
    if (!this.serving) {
      if (now - this.startedAt > this.peer.initLimit * this.peer.tickMs) return this.peer.goLooking('no quorum of followers within initLimit');
    } else {
      for (const [sid, h] of this.learners) if (now - h.lastHeard > this.peer.syncLimit * this.peer.tickMs) this.learners.delete(sid);
      const synced = [...this.learners.values()].filter((h) => h.state === 'synced').length + 1;
      if (synced < this.peer.quorum()) return this.peer.goLooking('not sufficient followers synced');
    }
    this.timer = this.rt.setTimer(this.peer.tickMs, () => this.tick());
  }

  send(h, type, body) {
    this.rt.send(h.sid, type, { conn: h.conn, ...body });
  }

  forwarding() {
    return [...this.learners.values()].filter((h) => h.state === 'syncing' || h.state === 'synced');
  }

  processPacket(from, type, body) {
    if (type === 'FOLLOWERINFO') return this.followerInfo(from, body);
    if (type === 'CONNREFUSED') return;
    const h = this.learners.get(from);
    if (!h || h.conn !== body.conn) return;
    h.lastHeard = this.rt.now();
    switch (type) {
      case 'ACKEPOCH':
        return this.ackEpoch(h, body);
      case 'ACK':
        if (h.state === 'syncing' && body.zxid === makeZxid(this.newEpoch, 0)) return this.newLeaderAck(h);
        return this.processAck(h.sid, body.zxid);
      case 'REQUEST':
        if (!this.serving) return;
        return this.propose(body.txn, { sid: h.sid, cxid: body.cxid });
      case 'SYNC':
        return this.sync(() => this.send(h, 'SYNC', { cxid: body.cxid }));
      default:
        return; // PING
    }
  }

  // ---- discovery: pick the new epoch ------------------------------------------------

  followerInfo(from, body) {
    const h = new LearnerHandler(from, body.conn, Number(body.acceptedEpoch), this.rt.now());
    this.learners.set(from, h);
    this.rt.log.info('learner connected', { sid: from, acceptedEpoch: h.acceptedEpoch, lastZxid: hexZxid(body.lastZxid) });
    if (this.newEpoch !== null) return this.send(h, 'LEADERINFO', { newEpoch: this.newEpoch });
    this.connecting.add(from);
    if (this.connecting.size < this.peer.quorum()) return;
    let max = this.peer.acceptedEpoch;
    for (const l of this.learners.values()) max = Math.max(max, l.acceptedEpoch);
    this.newEpoch = max + 1;
    this.startedAt = this.rt.now();
    this.peer.setAcceptedEpoch(this.newEpoch);
    this.lastProposed = makeZxid(this.newEpoch, 0);
    this.rt.log.info('new epoch', { epoch: this.newEpoch });
    for (const l of this.learners.values()) this.send(l, 'LEADERINFO', { newEpoch: this.newEpoch });
  }

  ackEpoch(h, body) {
    if (h.state !== 'epoch') return;
    const lastZxid = this.zk.tree.lastProcessedZxid;
    if (body.currentEpoch > this.peer.currentEpoch || (body.currentEpoch === this.peer.currentEpoch && body.lastZxid > lastZxid)) {
      return this.peer.goLooking(`follower ${h.sid} is ahead of the leader`);
    }
    h.peerLastZxid = body.lastZxid;
    h.state = 'waiting';
    if (!this.epochSettled) {
      this.epochAcks.add(h.sid);
      if (this.epochAcks.size < this.peer.quorum()) return;
      this.epochSettled = true;
      this.startedAt = this.rt.now();
      this.peer.setCurrentEpoch(this.newEpoch);
      for (const l of this.learners.values()) if (l.state === 'waiting') this.syncFollower(l);
      return;
    }
    this.syncFollower(h);
  }

  // ---- synchronization ---------------------------------------------------------------

  syncFollower(h) {
    const peerLastZxid = h.peerLastZxid;
    const committedLog = this.zk.committedLog;
    const minCommittedLog = this.zk.minCommittedLog;
    const maxCommittedLog = this.zk.maxCommittedLog;
    let mode;
    if (peerLastZxid === maxCommittedLog) {
      mode = 'DIFF';
      this.send(h, 'DIFF', { zxid: maxCommittedLog });
    } else if (peerLastZxid > maxCommittedLog) {
      mode = 'TRUNC';
      this.send(h, 'TRUNC', { zxid: maxCommittedLog });
    } else if (minCommittedLog <= peerLastZxid) {
      let prevProposalZxid = -1;
      let first = true;
      for (const txn of committedLog) {
        if (txn.zxid <= peerLastZxid) {
          prevProposalZxid = txn.zxid;
          continue;
        }
        if (first) {
          first = false;
          if (prevProposalZxid < peerLastZxid) {
            mode = 'TRUNC';
            this.send(h, 'TRUNC', { zxid: prevProposalZxid });
          } else {
            mode = 'DIFF';
            this.send(h, 'DIFF', { zxid: maxCommittedLog });
          }
        }
        this.send(h, 'PROPOSAL', { txn });
        this.send(h, 'COMMIT', { zxid: txn.zxid });
      }
    } else {
      mode = 'SNAP';
      this.send(h, 'SNAP', { snapshot: this.zk.tree.serialize() });
    }
    for (const p of this.outstanding.values()) this.send(h, 'PROPOSAL', { txn: p.txn });
    this.rt.log.info('syncing learner', { sid: h.sid, mode, peerLastZxid: hexZxid(peerLastZxid), minCommittedLog: hexZxid(minCommittedLog), maxCommittedLog: hexZxid(maxCommittedLog) });
    h.syncedUpTo = this.lastProposed;
    h.state = 'syncing';
    this.send(h, 'NEWLEADER', { zxid: makeZxid(this.newEpoch, 0) });
  }

  newLeaderAck(h) {
    h.state = 'synced';
    for (const [zxid, p] of this.outstanding) if (zxid <= h.syncedUpTo) p.acks.add(h.sid);
    if (this.serving) {
      this.send(h, 'UPTODATE', {});
      return this.tryCommit();
    }
    this.newLeaderAcks.add(h.sid);
    if (this.newLeaderAcks.size < this.peer.quorum()) return;
    this.serving = true;
    for (const id of this.zk.tree.sessions) this.sessionTracker.set(id, { closing: false });
    this.rt.log.info('leader serving', { epoch: this.newEpoch, lastZxid: hexZxid(this.zk.tree.lastProcessedZxid), quorum: [...this.newLeaderAcks] });
    for (const l of this.learners.values()) if (l.state === 'synced') this.send(l, 'UPTODATE', {});
  }

  // ---- broadcast -----------------------------------------------------------------------

  submit(txn, reply) {
    const cxid = ++this.cxid;
    this.pending.set(cxid, reply);
    this.propose(txn, { sid: this.rt.id, cxid });
  }

  /**
   * Like PrepRequestProcessor: checks a request against the session tracker before it gets a zxid (the tree,
   * like ZooKeeper's DataTree, applies an ephemeral create without a session check of its own); a rejected
   * request goes through the pipeline as an error txn.
   */
  prepRequest(txn) {
    const session = this.sessionTracker.get(txn.session);
    switch (txn.type) {
      case 'createSession':
        this.sessionTracker.set(txn.session, { closing: false });
        return txn;
      case 'closeSession':
        // The session's ephemerals go when this txn is applied; nothing prepared after it may add one.
        if (session) session.closing = true;
        return txn;
      case 'create':
        if (txn.ephemeral && (!session || session.closing)) {
          this.rt.log.debug('session check failed', { session: txn.session, path: txn.path });
          return { type: 'error', error: 'SESSIONEXPIRED', path: txn.path };
        }
        return txn;
      default:
        return txn;
    }
  }

  propose(request, origin) {
    const txn = this.prepRequest(request);
    const zxid = makeZxid(this.newEpoch, ++this.counter);
    const full = { zxid, ...txn, origin };
    this.zk.append([full]);
    this.zk.commit();
    this.lastProposed = zxid;
    this.outstanding.set(zxid, { txn: full, acks: new Set([this.rt.id]) });
    this.rt.log.debug('proposed', { zxid: hexZxid(zxid), type: txn.type, path: txn.path, session: txn.session });
    for (const h of this.forwarding()) this.send(h, 'PROPOSAL', { txn: full });
    this.tryCommit();
  }

  processAck(sid, zxid) {
    const p = this.outstanding.get(zxid);
    if (!p) return;
    p.acks.add(sid);
    this.tryCommit();
  }

  tryCommit() {
    for (const [zxid, p] of this.outstanding) {
      if (p.acks.size < this.peer.quorum()) break;
      this.outstanding.delete(zxid);
      for (const h of this.forwarding()) this.send(h, 'COMMIT', { zxid });
      const result = this.zk.tree.processTxn(p.txn);
      if (p.txn.type === 'closeSession') this.sessionTracker.delete(p.txn.session);
      this.zk.addCommittedProposal(p.txn);
      this.rt.log.info('committed', { zxid: hexZxid(zxid), type: p.txn.type, path: p.txn.path, session: p.txn.session, ok: result.ok });
      if (p.txn.origin.sid === this.rt.id) {
        const done = this.pending.get(p.txn.origin.cxid);
        this.pending.delete(p.txn.origin.cxid);
        done?.({ ...result, zxid: hexZxid(zxid) });
      }
      this.syncs = this.syncs.filter((s) => (s.after <= zxid ? (s.done(), false) : true));
    }
  }

  sync(done) {
    if (this.outstanding.size === 0) return done();
    this.syncs.push({ after: this.lastProposed, done });
  }
}
