// ipc.js — Hadoop IPC in miniature: a call carries a reqId, the callee answers
// `type + 'Resp'` with the same reqId, and a call left unanswered completes with
// { ok: false, error: 'timeout' }.

export class IpcClient {
  /** @param {DDBench.NodeRuntime} rt the node runtime */
  constructor(rt) {
    this.rt = rt;
    this.callId = 0;
    /** @type {Map<string, (res: any) => void>} */
    this.calls = new Map();
  }

  call(to, type, body, timeoutMs, cb) {
    const reqId = `${this.rt.id}#${++this.callId}`;
    const timer = this.rt.setTimer(timeoutMs, () => {
      if (this.calls.delete(reqId)) cb({ ok: false, error: 'timeout' });
    });
    this.calls.set(reqId, (res) => {
      timer.cancel();
      cb(res);
    });
    this.rt.send(to, type, { ...body, reqId });
  }

  /** Completes the call `msg` answers, if any; true when `msg` was an answer to this process. */
  receive(msg) {
    const reqId = msg.body?.reqId;
    if (typeof reqId !== 'string' || !reqId.startsWith(`${this.rt.id}#`) || !msg.type.endsWith('Resp')) return false;
    const cb = this.calls.get(reqId);
    if (cb) {
      this.calls.delete(reqId);
      cb(msg.body);
    }
    return true;
  }
}

export function responder(rt, msg) {
  const reqId = msg.body?.reqId ?? null;
  return (res) => rt.send(msg.from, msg.type + 'Resp', { reqId, ...res });
}
