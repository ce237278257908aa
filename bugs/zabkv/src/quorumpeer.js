// quorumpeer.js — after ZooKeeper's QuorumPeer and ZooKeeperServer: one server
// of the ensemble. It runs leader election while LOOKING, then becomes a
// Leader or a Follower; acceptedEpoch and currentEpoch are kept in files next
// to the txn log. Clients may talk to any server that is serving: reads are
// answered from the local tree, writes go to the leader, and `Sync` makes a
// follower catch up with the leader before the client's next read.

import { FastLeaderElection } from './election.js';
import { Follower } from './learner.js';
import { Leader } from './leader.js';
import { ZKDatabase, hexZxid } from './zkdatabase.js';

export class QuorumPeer {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    const c = rt.config;
    this.tickMs = Number(c.tickMs ?? 100);
    this.initLimit = Number(c.initLimit ?? 40);
    this.syncLimit = Number(c.syncLimit ?? 20);
    this.notifyMs = Number(c.notifyMs ?? 200);
    this.finalizeWaitMs = Number(c.finalizeWaitMs ?? 100);
    this.zkDb = new ZKDatabase(rt.disk, { snapCount: Number(c.snapCount ?? 50), log: rt.log });
    this.state = 'LOOKING';
    this.currentVote = null;
    this.election = new FastLeaderElection(this);
    /** @type {Leader | Follower | null} */
    this.role = null;
    this.acceptedEpoch = Number(rt.disk.read('acceptedEpoch') ?? 0);
    this.currentEpoch = Number(rt.disk.read('currentEpoch') ?? 0);
  }

  start() {
    this.zkDb.loadDataBase();
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => this.status());
    this.rt.log.info('server started', { currentEpoch: this.currentEpoch, acceptedEpoch: this.acceptedEpoch, lastZxid: hexZxid(this.getLastLoggedZxid()) });
    this.goLooking('startup');
  }

  quorum() {
    return Math.floor(this.rt.nodes.length / 2) + 1;
  }

  getLastLoggedZxid() {
    return this.zkDb.tree.lastProcessedZxid;
  }

  setAcceptedEpoch(e) {
    this.acceptedEpoch = e;
    this.rt.disk.write('acceptedEpoch', String(e));
    this.rt.disk.sync();
  }

  setCurrentEpoch(e) {
    this.currentEpoch = e;
    this.rt.disk.write('currentEpoch', String(e));
    this.rt.disk.sync();
  }

  goLooking(reason) {
    if (this.role) {
      this.role.shutdown();
      this.role = null;
    }
    if (this.state !== 'LOOKING' || reason === 'startup') this.rt.log.info('LOOKING', { reason });
    this.state = 'LOOKING';
    this.currentVote = null;
    this.zkDb.fastForwardDataBase();
    this.election.lookForLeader();
  }

  electionDone(vote, electionEpoch) {
    this.currentVote = { leader: vote.leader, zxid: vote.zxid, peerEpoch: vote.peerEpoch };
    if (vote.leader === this.rt.id) {
      this.state = 'LEADING';
      this.rt.log.info('LEADING', { electionEpoch, lastZxid: hexZxid(this.getLastLoggedZxid()) });
      this.role = new Leader(this);
    } else {
      this.state = 'FOLLOWING';
      this.rt.log.info('FOLLOWING', { leader: vote.leader, electionEpoch });
      this.role = new Follower(this, vote.leader);
    }
    this.role.start();
  }

  onMessage({ from, type, body }) {
    if (this.rt.nodes.includes(from)) {
      if (type === 'NOTIFICATION') return this.election.receive(from, body);
      if (this.role) this.role.processPacket(from, type, body ?? {});
      // Only a leader accepts learner connections; anyone else refuses them.
      else if (type === 'FOLLOWERINFO') this.rt.send(from, 'CONNREFUSED', { conn: body?.conn ?? null });
      return;
    }
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: req.reqId ?? null, ...res });
    if (type === 'Status') return reply({ ok: true, ...this.brief() });
    if (!this.role || !this.role.serving) return reply({ ok: false, error: 'not serving', state: this.state });
    switch (type) {
      case 'GetData':
        return reply({ ok: true, ...this.zkDb.tree.getData(String(req.path)), zxid: hexZxid(this.zkDb.tree.lastProcessedZxid) });
      case 'Sync':
        return this.role.sync(() => reply({ ok: true, zxid: hexZxid(this.zkDb.tree.lastProcessedZxid) }));
      case 'CreateSession':
        // Like SessionTrackerImpl, the server the client reached picks the id; the createSession txn makes it global.
        return this.role.submit({ type: 'createSession', session: `${this.rt.id}.${Math.floor(this.rt.random() * 2 ** 32).toString(16)}` }, reply);
      case 'CloseSession':
        return this.role.submit({ type: 'closeSession', session: String(req.session ?? '') }, reply);
      case 'Create':
        return this.role.submit({ type: 'create', path: String(req.path), data: String(req.data ?? ''), ...(req.ephemeral ? { ephemeral: true, session: String(req.session ?? '') } : {}) }, reply);
      case 'SetData':
        return this.role.submit({ type: 'setData', path: String(req.path), data: String(req.data ?? ''), version: Number(req.version ?? -1) }, reply);
      case 'Delete':
        return this.role.submit({ type: 'delete', path: String(req.path), version: Number(req.version ?? -1) }, reply);
      default:
        return reply({ ok: false, error: `unknown request ${type}` });
    }
  }

  brief() {
    return {
      id: this.rt.id,
      state: this.state,
      serving: Boolean(this.role?.serving),
      leader: this.currentVote?.leader ?? null,
      currentEpoch: this.currentEpoch,
      lastZxid: hexZxid(this.zkDb.tree.lastProcessedZxid),
    };
  }

  status() {
    const tree = this.zkDb.tree;
    const znodes = [...tree.nodes.keys()].filter((p) => p !== '/').sort();
    return {
      ...this.brief(),
      acceptedEpoch: this.acceptedEpoch,
      lastLoggedZxid: hexZxid(this.zkDb.lastLoggedZxid()),
      snapshotZxid: hexZxid(this.zkDb.snapshotZxid),
      digest: tree.digest(),
      znodeCount: znodes.length,
      tree: znodes.length <= 1000 ? Object.fromEntries(znodes.map((p) => [p, tree.nodes.get(p).data])) : null,
      sessions: [...tree.sessions].sort(),
      ephemerals: Object.fromEntries(znodes.filter((p) => tree.nodes.get(p).ephemeralOwner).map((p) => [p, tree.nodes.get(p).ephemeralOwner])),
      outstanding: this.role?.outstandingCount?.() ?? 0,
    };
  }
}
