// learner.js — after ZooKeeper's Learner and Follower. A follower connects to
// the elected leader (FOLLOWERINFO), accepts its new epoch (LEADERINFO /
// ACKEPOCH), is brought up to date by syncWithLeader (DIFF, TRUNC or SNAP,
// then proposals and commits, NEWLEADER, UPTODATE) and then follows the
// broadcast: each PROPOSAL is logged before it is ACKed, each COMMIT applied
// to the tree. A SNAP replaces the tree in memory and a TRUNC cuts the txn log
// back; after either, the sync's committed txns are applied to the tree as they
// arrive and the tree is written as the snapshot at NEWLEADER (Learner's
// snapshotNeeded). The txns of a DIFF are applied once they are logged. Writes
// from its clients are forwarded to the leader as REQUEST; reads are served
// from the local tree.

import { hexZxid } from './zkdatabase.js';

export class Follower {
  /** @param {any} peer the QuorumPeer */
  constructor(peer, leader) {
    this.peer = peer;
    this.rt = peer.rt;
    this.zk = peer.zkDb;
    this.leader = leader;
    this.conn = `${this.rt.id}-${Math.floor(this.rt.random() * 2 ** 32).toString(16)}`;
    /** connect → sync → broadcast */
    this.phase = 'connect';
    this.serving = false;
    this.newEpoch = null;
    /** DIFF, TRUNC or SNAP, from the leader's first sync packet until NEWLEADER (QuorumPeer's syncMode) */
    this.syncMode = null;
    /** proposals received while syncing, not yet in the txn log */
    this.packetsNotLogged = [];
    /** zxids committed while syncing, applied once their proposals are logged */
    this.packetsCommitted = [];
    /** logged proposals waiting for their COMMIT */
    this.pendingTxns = [];
    this.cxid = 0;
    /** @type {Map<number, (res: any) => void>} */
    this.pending = new Map();
    /** @type {Map<number, () => void>} */
    this.syncs = new Map();
    this.timer = null;
  }

  start() {
    this.lastHeard = this.rt.now();
    this.connectAttempts = 1;
    this.connectToLeader();
    this.tick();
  }

  connectToLeader() {
    this.send('FOLLOWERINFO', { acceptedEpoch: this.peer.acceptedEpoch, lastZxid: this.peer.getLastLoggedZxid() });
  }

  /** The leader-elect may not be leading yet: try again a few times, like Learner.connectToLeader. */
  connectRefused() {
    if (this.phase !== 'connect') return;
    if (this.connectAttempts >= 5) return this.peer.goLooking(`${this.leader} is not leading`);
    this.connectAttempts += 1;
    this.rt.setTimer(this.peer.tickMs * 2, () => {
      if (this.peer.role === this && this.phase === 'connect') this.connectToLeader();
    });
  }

  shutdown() {
    this.timer?.cancel();
    // A SNAP or TRUNC sync left before NEWLEADER changed the tree in memory only: go back to what is on disk.
    if (this.snapshotNeeded) this.zk.loadDataBase();
    this.serving = false;
    for (const done of this.pending.values()) done({ ok: false, error: 'connection loss' });
    this.pending.clear();
    this.syncs.clear();
  }

  /** A SNAP or TRUNC sync, whose tree is saved as the snapshot at NEWLEADER (Learner's snapshotNeeded). */
  get snapshotNeeded() {
    return this.syncMode === 'SNAP' || this.syncMode === 'TRUNC';
  }

  outstandingCount() {
    return this.pendingTxns.length;
  }

  tick() {
    const limit = (this.phase === 'broadcast' ? this.peer.syncLimit : this.peer.initLimit) * this.peer.tickMs;
    if (this.rt.now() - this.lastHeard > limit) return this.peer.goLooking(`no packets from leader ${this.leader}`);
    this.timer = this.rt.setTimer(this.peer.tickMs, () => this.tick());
  }

  send(type, body) {
    this.rt.send(this.leader, type, { conn: this.conn, ...body });
  }

  /** Appends txns to the txn log, syncs it, and ACKs each one. */
  logRequests(txns) {
    this.zk.append(txns);
    this.zk.commit();
    for (const txn of txns) this.send('ACK', { zxid: txn.zxid });
  }

  processPacket(from, type, body) {
    if (type === 'FOLLOWERINFO') return this.rt.send(from, 'CONNREFUSED', { conn: body.conn });
    if (from !== this.leader || body.conn !== this.conn) return;
    if (type !== 'CONNREFUSED') this.lastHeard = this.rt.now();
    switch (type) {
      case 'LEADERINFO':
        return this.leaderInfo(body.newEpoch);
      case 'DIFF':
        this.syncMode = 'DIFF';
        return this.rt.log.info('sync mode', { mode: 'DIFF', leaderMax: hexZxid(body.zxid) });
      case 'TRUNC': {
        this.syncMode = 'TRUNC';
        const last = this.zk.truncateLog(body.zxid);
        return this.rt.log.info('sync mode', { mode: 'TRUNC', truncatedTo: hexZxid(body.zxid), lastZxid: hexZxid(last) });
      }
      case 'SNAP': {
        this.syncMode = 'SNAP';
        const last = this.zk.deserializeSnapshot(body.snapshot);
        return this.rt.log.info('sync mode', { mode: 'SNAP', lastZxid: hexZxid(last) });
      }
      case 'PROPOSAL':
        return this.proposal(body.txn);
      case 'COMMIT':
        return this.commit(body.zxid);
      case 'NEWLEADER':
        return this.newLeader(body.zxid);
      case 'UPTODATE':
        return this.upToDate();
      case 'SYNC': {
        const done = this.syncs.get(body.cxid);
        this.syncs.delete(body.cxid);
        return done?.();
      }
      case 'PING':
        return this.send('PING', {});
      case 'CONNREFUSED':
        return this.connectRefused();
      default:
        return;
    }
  }

  leaderInfo(newEpoch) {
    if (newEpoch < this.peer.acceptedEpoch) return this.peer.goLooking(`leader epoch ${newEpoch} is older than accepted epoch ${this.peer.acceptedEpoch}`);
    if (newEpoch > this.peer.acceptedEpoch) this.peer.setAcceptedEpoch(newEpoch);
    this.newEpoch = newEpoch;
    this.phase = 'sync';
    this.send('ACKEPOCH', { currentEpoch: this.peer.currentEpoch, lastZxid: this.peer.getLastLoggedZxid() });
  }

  proposal(txn) {
    if (this.phase === 'sync') {
      this.packetsNotLogged.push(txn);
      return;
    }
    this.logRequests([txn]);
    this.pendingTxns.push(txn);
  }

  commit(zxid) {
    if (this.phase !== 'sync') return this.apply(this.pendingTxns, zxid);
    // The snapshot written at NEWLEADER covers what a SNAP or TRUNC sync applies; a DIFF's txns wait for the log.
    if (this.snapshotNeeded) return this.apply(this.packetsNotLogged, zxid);
    this.packetsCommitted.push(zxid);
  }

  /** Applies the txn at the head of queue, which must be the one committed. */
  apply(queue, zxid) {
    if (queue.length === 0 || queue[0].zxid !== zxid) {
      this.rt.log.warn('commit for an unexpected zxid', { zxid: hexZxid(zxid), expected: queue[0] ? hexZxid(queue[0].zxid) : null });
      return this.peer.goLooking('out of order commit');
    }
    const txn = queue.shift();
    const result = this.zk.tree.processTxn(txn);
    this.zk.addCommittedProposal(txn);
    if (txn.origin?.sid === this.rt.id) {
      const done = this.pending.get(txn.origin.cxid);
      this.pending.delete(txn.origin.cxid);
      done?.({ ...result, zxid: hexZxid(zxid) });
    }
  }

  newLeader(zxid) {
    if (this.snapshotNeeded) this.zk.takeSnapshot();
    this.syncMode = null;
    this.logSynced();
    this.peer.setCurrentEpoch(this.newEpoch);
    this.rt.log.info('NEWLEADER', { epoch: this.newEpoch, lastZxid: hexZxid(this.zk.tree.lastProcessedZxid) });
    this.send('ACK', { zxid });
  }

  /** Writes the proposals received while syncing to the txn log, then applies those already committed. Returns the txns it logged. */
  logSynced() {
    const txns = this.packetsNotLogged;
    this.zk.append(txns);
    this.zk.commit();
    this.pendingTxns.push(...txns);
    this.packetsNotLogged = [];
    for (const zxid of this.packetsCommitted) this.apply(this.pendingTxns, zxid);
    this.packetsCommitted = [];
    return txns;
  }

  upToDate() {
    this.phase = 'broadcast';
    for (const txn of this.logSynced()) this.send('ACK', { zxid: txn.zxid });
    this.serving = true;
    this.rt.log.info('UPTODATE: serving', { leader: this.leader, epoch: this.newEpoch, lastZxid: hexZxid(this.zk.tree.lastProcessedZxid) });
  }

  submit(txn, reply) {
    const cxid = ++this.cxid;
    this.pending.set(cxid, reply);
    this.send('REQUEST', { cxid, txn });
  }

  sync(done) {
    const cxid = ++this.cxid;
    this.syncs.set(cxid, done);
    this.send('SYNC', { cxid });
  }
}
