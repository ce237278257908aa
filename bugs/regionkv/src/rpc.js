// rpc.js — request/response between processes, after HBase's RpcClient: every
// call carries a reqId, the callee answers `type + 'Resp'` with the same reqId,
// and a call that gets no answer in time completes with { error: 'timeout' }.

export class RpcClient {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.seq = 0;
    /** @type {Map<string, (res: any) => void>} */
    this.pending = new Map();
  }

  /** Calls `type` on `to`; `cb` gets the reply body, or { ok: false, error: 'timeout' }. */
  call(to, type, body, timeoutMs, cb) {
    const reqId = `${this.rt.id}:${++this.seq}`;
    const timer = this.rt.setTimer(timeoutMs, () => {
      if (this.pending.delete(reqId)) cb({ ok: false, error: 'timeout' });
    });
    this.pending.set(reqId, (res) => {
      timer.cancel();
      cb(res);
    });
    this.rt.send(to, type, { ...body, reqId });
  }

  /** Completes a pending call if `msg` answers one; returns whether it did. */
  onReply(msg) {
    const reqId = msg.body?.reqId;
    if (typeof reqId !== 'string' || !msg.type.endsWith('Resp')) return false;
    const done = this.pending.get(reqId);
    if (!done) return reqId.startsWith(`${this.rt.id}:`);
    this.pending.delete(reqId);
    done(msg.body);
    return true;
  }
}

/** Replies to a request message with `type + 'Resp'`. */
export function replier(rt, msg) {
  const reqId = msg.body?.reqId ?? null;
  return (res) => rt.send(msg.from, msg.type + 'Resp', { reqId, ...res });
}

/** The host (node id) of a server name `host,startcode`. */
export function hostOf(serverName) {
  return String(serverName).split(',')[0];
}
