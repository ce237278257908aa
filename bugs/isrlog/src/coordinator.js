// coordinator.js — after Kafka's TransactionCoordinator and
// TransactionMarkerChannelManager. Here it runs on the controller node beside the
// controller (in Kafka it runs on the broker leading the transactional id's
// __transaction_state partition), and its transaction log is a file on that node.
// Per transactional id it keeps the producer id and epoch, the transaction's state
// and its partitions. InitProducerId fences older producers of the id (bumping the
// epoch and aborting an open transaction); AddPartitionsToTxn adds partitions to the
// transaction; EndTxn moves it to PrepareCommit or PrepareAbort, answers, and then
// writes the COMMIT or ABORT marker to every partition's leader (WriteTxnMarkers,
// retried until written), after which the transaction is complete.

const TXN_LOG = 'transaction-state';
const MARKER_RETRY_MS = 200;

/**
 * @typedef {{ producerId: number, producerEpoch: number, state: string, partitions: string[], markerSeq: number }} TxnMetadata
 * state: Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort
 */

export class TransactionCoordinator {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {() => string | null} partitionLeader the partition's current leader, per the controller
   */
  constructor(rt, partitionLeader) {
    this.rt = rt;
    this.partitionLeader = partitionLeader;
    const saved = JSON.parse(rt.disk.read(TXN_LOG) ?? '{"nextProducerId":1000,"txns":{}}');
    this.nextProducerId = Number(saved.nextProducerId);
    /** @type {Map<string, TxnMetadata>} */
    this.txns = new Map(Object.entries(saved.txns));
  }

  /** Finishes writing the markers of transactions that were preparing when the node stopped. */
  start() {
    for (const [id, m] of this.txns) if (m.state.startsWith('Prepare')) this.sendMarkers(id, m);
  }

  persist() {
    this.rt.disk.write(TXN_LOG, JSON.stringify({ nextProducerId: this.nextProducerId, txns: Object.fromEntries(this.txns) }));
    this.rt.disk.sync();
  }

  /** Handles a transaction request; returns false if `type` is not one. */
  handle(type, req, reply) {
    switch (type) {
      case 'InitProducerId':
        reply(this.initProducerId(String(req.transactionalId)));
        return true;
      case 'AddPartitionsToTxn':
        reply(this.addPartitions(req));
        return true;
      case 'EndTxn':
        reply(this.endTxn(req));
        return true;
      case 'WriteTxnMarkersResp':
        this.onMarkerWritten(req);
        return true;
      default:
        return false;
    }
  }

  initProducerId(transactionalId) {
    const m = this.txns.get(transactionalId);
    if (!m) {
      const fresh = { producerId: this.nextProducerId++, producerEpoch: 0, state: 'Empty', partitions: [], markerSeq: 0 };
      this.txns.set(transactionalId, fresh);
      this.persist();
      this.rt.log.info('producer id assigned', { transactionalId, producerId: fresh.producerId, producerEpoch: 0 });
      return { ok: true, producerId: fresh.producerId, producerEpoch: 0 };
    }
    if (m.state.startsWith('Prepare')) return { ok: false, error: 'CONCURRENT_TRANSACTIONS' };
    m.producerEpoch += 1;
    if (m.state === 'Ongoing') {
      // Fence the old producer: abort its transaction under the new epoch; the caller retries.
      this.prepare(transactionalId, m, false);
      return { ok: false, error: 'CONCURRENT_TRANSACTIONS' };
    }
    m.state = 'Empty';
    m.partitions = [];
    this.persist();
    this.rt.log.info('producer epoch bumped', { transactionalId, producerId: m.producerId, producerEpoch: m.producerEpoch });
    return { ok: true, producerId: m.producerId, producerEpoch: m.producerEpoch };
  }

  /** The transaction of a request, or the error to answer. */
  lookup(req) {
    const m = this.txns.get(String(req.transactionalId));
    if (!m || m.producerId !== req.producerId) return { error: 'INVALID_PRODUCER_ID_MAPPING' };
    if (m.producerEpoch !== req.producerEpoch) return { error: 'PRODUCER_FENCED' };
    return { m };
  }

  addPartitions(req) {
    const { m, error } = this.lookup(req);
    if (!m) return { ok: false, error };
    if (m.state.startsWith('Prepare')) return { ok: false, error: 'CONCURRENT_TRANSACTIONS' };
    const partitions = /** @type {string[]} */ (req.partitions ?? []);
    if (req.verifyOnly) {
      const ok = m.state === 'Ongoing' && partitions.every((p) => m.partitions.includes(p));
      return ok ? { ok: true } : { ok: false, error: 'INVALID_TXN_STATE' };
    }
    if (m.state !== 'Ongoing') {
      m.state = 'Ongoing';
      m.partitions = [];
      this.rt.log.info('transaction started', { transactionalId: req.transactionalId, producerId: m.producerId, producerEpoch: m.producerEpoch });
    }
    m.partitions = [...new Set([...m.partitions, ...partitions])];
    this.persist();
    return { ok: true };
  }

  endTxn(req) {
    const { m, error } = this.lookup(req);
    if (!m) return { ok: false, error };
    const commit = req.commit === true;
    const outcome = commit ? 'Commit' : 'Abort';
    if (m.state === 'Ongoing') {
      this.prepare(String(req.transactionalId), m, commit);
      return { ok: true };
    }
    // A retried EndTxn for the transaction that is ending or has ended.
    if (m.state === `Prepare${outcome}` || m.state === `Complete${outcome}`) return { ok: true };
    if (m.state.startsWith('Prepare')) return { ok: false, error: 'CONCURRENT_TRANSACTIONS' };
    return { ok: false, error: 'INVALID_TXN_STATE' };
  }

  prepare(transactionalId, m, commit) {
    m.state = commit ? 'PrepareCommit' : 'PrepareAbort';
    m.markerSeq += 1;
    this.persist();
    this.rt.log.info('transaction ending', { transactionalId, producerId: m.producerId, producerEpoch: m.producerEpoch, state: m.state, partitions: m.partitions });
    this.sendMarkers(transactionalId, m);
  }

  sendMarkers(transactionalId, m) {
    const seq = m.markerSeq;
    const attempt = () => {
      if (this.txns.get(transactionalId) !== m || m.markerSeq !== seq || !m.state.startsWith('Prepare')) return;
      const leader = this.partitionLeader();
      if (leader) {
        this.rt.send(leader, 'WriteTxnMarkers', {
          reqId: `${transactionalId}:${seq}`,
          producerId: m.producerId,
          producerEpoch: m.producerEpoch,
          commit: m.state === 'PrepareCommit',
        });
      }
      this.rt.setTimer(MARKER_RETRY_MS, attempt);
    };
    if (m.partitions.length === 0) return this.complete(transactionalId, m);
    attempt();
  }

  onMarkerWritten(res) {
    if (!res.ok) return;
    const [transactionalId, seq] = String(res.reqId).split(':');
    const m = this.txns.get(transactionalId);
    if (m && m.markerSeq === Number(seq) && m.state.startsWith('Prepare')) this.complete(transactionalId, m);
  }

  complete(transactionalId, m) {
    m.state = m.state === 'PrepareCommit' ? 'CompleteCommit' : 'CompleteAbort';
    m.partitions = [];
    this.persist();
    this.rt.log.info('transaction completed', { transactionalId, producerId: m.producerId, producerEpoch: m.producerEpoch, state: m.state });
  }
}
