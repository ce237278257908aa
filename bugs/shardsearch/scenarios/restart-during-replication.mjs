// restart-during-replication — the primary's node is restarted while a write is being replicated.
import { connect } from './lib/client.mjs';

export default {
  name: 'restart-during-replication',
  description:
    "With a green cluster and some documents, the primary's replication requests to the replica are slowed " +
    "down, a document is indexed through the primary's node, and while it is being replicated that node is " +
    'shut down gracefully and restarted, as in a rolling restart. The cluster must go green again, take ' +
    'writes, and serve every acknowledged document.',
  timeoutMs: 60000,
  async run(t) {
    const es = await connect(t, 'client-rolling');
    const h = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('the cluster forms and goes green', h.ok === true, { health: h });
    const acked = {};
    for (let i = 0; i < 3; i++) {
      const r = await es.index(`a${i}`, { n: i });
      t.check('an index request is acknowledged', r.ok === true, { reply: r });
      acked[`a${i}`] = i;
    }
    const node = h.primary;
    const replica = h.replicas[0].node;
    const rest = t.nodes.filter((n) => n !== node);
    t.addLinkFault({ from: node, to: replica, type: 'indices:data/write/index[r]', delayMs: [400, 400] });
    t.note("slowed the primary's replication requests to the replica", { primary: node, replica });
    const write = es.send(node, 'index', { id: 'during-restart', doc: { n: -1 } }, 4000);
    await t.waitFor((e) => e.node === node && e.kind === 'log' && e.msg === 'indexed on primary' && e.fields?.id === 'during-restart', {
      timeoutMs: 3000,
      description: 'the write reaches the primary',
      includePast: true,
    });
    const s = await es.shutdown(node);
    t.check('the node accepts the shutdown', s.ok === true, { reply: s });
    const during = await write;
    t.note('reply to the write sent before the shutdown', { reply: during });
    if (during.ok) acked['during-restart'] = -1;

    const h2 = await es.waitForCluster({ among: rest, minNodes: 4, where: (m) => !m.nodes.includes(node) && m.primary !== null && m.primary !== node });
    t.check('the replica is promoted once the node has left', h2.ok === true && h2.primary !== node, { health: h2 });
    t.clearLinkFaults();
    t.restart(node);
    t.note('restarted the node', { node });
    const h3 = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('the node rejoins and the cluster goes green', h3.ok === true, { health: h3 });
    const after = await es.index('after-restart', { n: 1 });
    t.check('writes succeed after the restart', after.ok === true, { after });
    acked['after-restart'] = 1;
    const lost = [];
    for (const [id, n] of Object.entries(acked)) {
      const g = await es.get(id, h3.master);
      if (!(g.ok === true && g.doc?.n === n)) lost.push({ id, reply: g });
    }
    t.check('every acknowledged document is readable', lost.length === 0, { lost });
  },
};
