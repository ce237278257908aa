// replica-unreachable — the primary cannot replicate to its replica, which stays in the cluster.
import { connect } from './lib/client.mjs';

export default {
  name: 'replica-unreachable',
  description:
    "With a green cluster, the primary's replication requests to the replica's node are lost while that node " +
    'stays in the cluster (its fault detection pings still get through). A write must still be acknowledged: ' +
    'the replica that cannot take it is failed and a new copy is recovered. Once the requests get through ' +
    'again the cluster goes green, and every acknowledged document is readable.',
  timeoutMs: 60000,
  async run(t) {
    const es = await connect(t, 'client-replica');
    const h = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('the cluster forms and goes green', h.ok === true, { health: h });
    const acked = {};
    for (let i = 0; i < 3; i++) {
      const r = await es.index(`a${i}`, { n: i });
      t.check('an index request is acknowledged', r.ok === true, { reply: r });
      acked[`a${i}`] = i;
    }
    const replica = h.replicas[0].node;
    t.addLinkFault({ from: h.primary, to: replica, type: 'indices:data/write/index[r]', drop: 1 });
    t.note("dropping the primary's replication requests", { primary: h.primary, replica });
    const during = await es.index('during', { n: 0 }, { timeoutMs: 10000 });
    t.check('a write is acknowledged while the replica cannot take it', during.ok === true, { reply: during });
    acked.during = 0;
    t.clearLinkFaults();
    const g = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('the cluster goes green again', g.ok === true, { health: g });
    const after = await es.index('after', { n: 1 });
    t.check('writes succeed afterwards', after.ok === true, { after });
    acked.after = 1;
    const lost = [];
    for (const [id, n] of Object.entries(acked)) {
      const d = await es.get(id, g.master);
      if (!(d.ok === true && d.doc?.n === n)) lost.push({ id, reply: d });
    }
    t.check('every acknowledged document is readable', lost.length === 0, { lost });
  },
};
