// zkwatcher.js — a process's ZooKeeper session, after HBase's ZKWatcher: connect,
// ping every zkPingMs, and tell the owner when the session has expired.

export const ZK = 'zk';

export class ZKWatcher {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {import('./rpc.js').RpcClient} rpc
   * @param {() => void} onExpired
   */
  constructor(rt, rpc, onExpired) {
    this.rt = rt;
    this.rpc = rpc;
    this.onExpired = onExpired;
    this.sid = null;
    this.pingMs = Number(rt.config.zkPingMs ?? 100);
    this.closed = false;
  }

  /** Opens a session, retrying until ZooKeeper answers. */
  connect(cb) {
    this.rpc.call(ZK, 'ZkConnect', {}, 1000, (res) => {
      if (!res.ok) return this.rt.setTimer(200, () => this.connect(cb));
      this.sid = res.sid;
      this.rt.log.info('zookeeper session established', { sid: this.sid });
      const ping = () => {
        if (this.closed) return;
        this.rpc.call(ZK, 'ZkPing', { sid: this.sid }, 1000, (r) => {
          if (r.error === 'session expired' && !this.closed) {
            this.closed = true;
            this.rt.log.warn('zookeeper session expired', { sid: this.sid });
            return this.onExpired();
          }
        });
        this.rt.setTimer(this.pingMs, ping);
      };
      ping();
      cb();
    });
  }

  /** One ZooKeeper (or shared filesystem) operation; `cb` gets the reply. */
  op(type, body, cb) {
    this.rpc.call(ZK, type, { ...body, sid: this.sid }, 1000, cb);
  }

  /** Like op, but retries a timed-out call until it is answered. */
  opRetry(type, body, cb) {
    this.op(type, body, (res) => {
      if (res.error === 'timeout' && !this.closed) return this.rt.setTimer(100, () => this.opRetry(type, body, cb));
      cb(res);
    });
  }
}
