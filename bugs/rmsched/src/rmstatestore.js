// rmstatestore.js — ZKRMStateStore: applications saved under the RM root in
// ZooKeeper. The active RM fences the root when it starts, and a background
// VerifyActiveStatusThread checks that it still owns it. A write refused
// because another RM fenced the root moves the store to FENCED and raises an
// RMFatalEvent on the RM's dispatcher.

export class RMStateStore {
  /** @param {DDBench.NodeRuntime} rt @param {import('./curator.js').ZKCuratorManager} zk @param {(type: string, cause: string, epoch: number) => void} fatal */
  constructor(rt, zk, fatal) {
    this.rt = rt;
    this.zk = zk;
    this.fatal = fatal;
    this.verifyMs = Number(rt.config.verifyActiveMs ?? 200);
    this.state = 'DEFAULT';
    this.epoch = -1;
    this.stopped = false;
  }

  /** Fences every other RM out of the root; cb gets the new epoch. */
  fence(cb) {
    this.zk.request('ZkMulti', { op: 'fence' }, (r) => {
      this.epoch = r.epoch;
      this.state = 'ACTIVE';
      this.rt.log.info('state store fenced the root', { epoch: r.epoch });
      cb(r.epoch);
    });
  }

  startVerifyActive() {
    const loop = () => {
      if (this.stopped || this.state === 'FENCED') return;
      this.op('verifyActive', {}, () => {});
      this.rt.setTimer(this.verifyMs, loop);
    };
    this.rt.setTimer(this.verifyMs, loop);
  }

  stop() {
    this.stopped = true;
  }

  loadState(cb) {
    this.op('load', {}, (r) => cb(r.ok ? r.apps : null));
  }

  storeApplication(app, cb) {
    this.op('storeApp', { app }, cb);
  }

  op(op, extra, cb) {
    if (this.state === 'FENCED') return cb({ ok: false, error: 'FENCED' });
    this.zk.request('ZkMulti', { op, epoch: this.epoch, ...extra }, (r) => {
      if (!r.ok && r.error === 'FENCED') this.notifyStoreOperationFailed(op, r);
      cb(r);
    });
  }

  notifyStoreOperationFailed(op, r) {
    if (this.state === 'FENCED') return;
    this.state = 'FENCED';
    this.rt.log.error('state store fenced', { op, epoch: this.epoch, storeEpoch: r.epoch, fencedBy: r.fencedBy });
    this.fatal('STATE_STORE_FENCED', `${op}: the root is owned by ${r.fencedBy}`, this.epoch);
  }
}
