// jetstream.js — the server side of one replicated stream, after
// nats-server's jetstream_cluster.go: client API requests become raft
// proposals on the stream's group; committed entries are applied to the
// stream and its consumers on every member, and the leader answers the
// publisher (a PubAck with the stream sequence) once the entry is applied.
// Publishes with a Nats-Msg-Id are checked against the dedupe map on the
// leader before they are proposed (processClusteredInboundMsg).

import { Consumer } from './consumer.js';
import { FileStore } from './filestore.js';
import { Raft } from './raft.js';
import { Stream } from './stream.js';

export class JetStream {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.fs = new FileStore(rt);
    this.mset = new Stream(String(rt.config.stream ?? 'ORDERS'), Number(rt.config.duplicateWindowMs ?? 120000));
    /** @type {Map<string, Consumer>} */
    this.consumers = new Map();
    this.node = new Raft(rt, this.fs, {
      applyCommit: (e) => this.applyCommit(e),
      stateChanged: () => this.stateChanged(),
    });
    /** @type {Map<number, (result: any) => void>} proposals waiting to be applied, by log index */
    this.pending = new Map();
  }

  start() {
    this.rt.onMessage((msg) => this.onMessage(msg));
    this.rt.exposeState(() => this.status());
    this.rt.log.info('server started', { stream: this.mset.name, pindex: this.node.pindex() });
    this.fs.startFlusher();
    this.node.start();
  }

  onMessage({ from, type, body }) {
    if (this.rt.nodes.includes(from)) return this.node.handle(from, type, body);
    const req = body ?? {};
    const reply = (res) => this.rt.send(from, type + 'Resp', { reqId: req.reqId ?? null, ...res });
    switch (type) {
      case 'Status':
        return reply({ ok: true, ...this.brief() });
      case 'Publish':
        return this.processClusteredInboundMsg(reply, String(req.subject), String(req.data ?? ''), req.msgId ? String(req.msgId) : null);
      case 'StreamInfo':
        return this.leaderOnly(reply, () => reply({ ok: true, stream: this.mset.name, state: this.mset.state() }));
      case 'GetMsg': {
        const m = this.mset.getMsg(Number(req.seq));
        return reply(m ? { ok: true, msg: m } : { ok: false, error: 'no message found' });
      }
      case 'Fetch':
        return this.fetch(reply, String(req.durable), Number(req.batch ?? 1));
      case 'Ack':
        return this.propose(reply, { op: 'ack', durable: String(req.durable), seq: Number(req.seq) });
      case 'ConsumerInfo':
        return this.leaderOnly(reply, () => {
          const c = this.consumers.get(String(req.durable));
          reply(c ? { ok: true, ...c.info() } : { ok: false, error: 'consumer not found' });
        });
      case 'PeerRemove': {
        const r = this.node.proposeRemovePeer(String(req.peer));
        if (r.error === 'not leader') return reply(this.notLeader());
        if (r.error) return reply({ ok: false, error: r.error });
        this.pending.set(r.index, reply);
        return;
      }
      case 'StepDown':
        return reply(this.node.stepDown() ? { ok: true } : this.notLeader());
      default:
        return reply({ ok: false, error: `unknown request ${type}` });
    }
  }

  notLeader() {
    return { ok: false, error: 'not leader', leader: this.node.leader || null };
  }

  leaderOnly(reply, fn) {
    if (!this.node.isLeader()) return reply(this.notLeader());
    fn();
  }

  processClusteredInboundMsg(reply, subject, data, msgId) {
    if (!this.node.isLeader()) return reply(this.notLeader());
    const ts = this.rt.now();
    if (msgId) {
      const dde = this.mset.checkMsgId(msgId, ts);
      if (dde) {
        // A msg ID still in flight has no sequence to answer with yet.
        if (dde.seq > 0) return reply({ ok: true, stream: this.mset.name, seq: dde.seq, duplicate: true });
        return reply({ ok: false, error: 'duplicate message conflict' });
      }
      // Staged with sequence 0 until the entry is applied.
      this.mset.storeMsgId({ id: msgId, seq: 0, ts });
    }
    this.propose(reply, { op: 'msg', subject, data, msgId, ts });
  }

  propose(done, data) {
    if (!this.node.isLeader()) return done(this.notLeader());
    const index = this.node.propose(data);
    this.pending.set(index, done);
  }

  fetch(reply, durable, batch) {
    if (!this.node.isLeader()) return reply(this.notLeader());
    const c = this.consumers.get(durable) ?? new Consumer(durable);
    const seqs = c.nextBatch(batch, this.mset.lastSeq);
    if (seqs.length === 0) return reply({ ok: true, msgs: [] });
    this.propose((res) => {
      if (!res.ok) return reply(res);
      reply({ ok: true, msgs: seqs.map((s) => this.mset.getMsg(s)).filter(Boolean) });
    }, { op: 'delivered', durable, upTo: seqs[seqs.length - 1] });
  }

  stateChanged() {
    // Publishes staged under the old leadership either made it into the log, and are recorded when
    // applied, or were never stored: let their retries through.
    this.mset.clearInflightMsgIds();
    if (this.node.isLeader()) return;
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const done of waiting) done({ ok: false, error: 'leader changed', leader: this.node.leader || null });
  }

  // ---- apply -----------------------------------------------------------------

  applyCommit(e) {
    const d = e.data;
    let result = { ok: true };
    switch (d.op) {
      case 'msg': {
        const seq = this.mset.processJetStreamMsg(d);
        result = { ok: true, stream: this.mset.name, seq, duplicate: false };
        this.rt.log.info('stored msg', { index: e.index, term: e.term, seq, msgId: d.msgId });
        break;
      }
      case 'delivered':
        this.consumer(d.durable).applyDelivered(d.upTo);
        break;
      case 'ack':
        this.consumer(d.durable).applyAck(d.seq);
        result = { ok: true, ackFloor: this.consumer(d.durable).ackFloor };
        break;
      case 'peer-remove':
        result = { ok: true, removed: d.peer, members: this.node.members };
        break;
      case 'leader':
        this.rt.log.info('leader entry applied', { index: e.index, term: e.term, leader: d.id });
        break;
    }
    const done = this.pending.get(e.index);
    if (done) {
      this.pending.delete(e.index);
      done(result);
    }
  }

  consumer(name) {
    let c = this.consumers.get(name);
    if (!c) this.consumers.set(name, (c = new Consumer(name)));
    return c;
  }

  // ---- state -----------------------------------------------------------------

  brief() {
    const n = this.node;
    return { id: this.rt.id, role: n.state, term: n.term, leader: n.leader || null, commit: n.commit, applied: n.applied };
  }

  status() {
    const n = this.node;
    return {
      ...this.brief(),
      vote: n.vote || null,
      members: n.members,
      pindex: n.pindex(),
      pterm: n.pterm,
      stream: { name: this.mset.name, ...this.mset.state(), hash: this.mset.hash() },
      msgIds: this.mset.lastSeq <= 2000 ? [...this.mset.msgs.values()].map((m) => m.msgId) : null,
      consumers: [...this.consumers.values()].map((c) => c.info()),
    };
  }
}
