// restart-primary-node — the node holding the primary is restarted while the cluster takes writes.
import { connect } from './lib/client.mjs';

export default {
  name: 'restart-primary-node',
  description:
    'With a green cluster and some documents, the node holding the primary is shut down gracefully between ' +
    'two writes and restarted a little later, as in a rolling restart. The replica must be promoted and take ' +
    'writes while the node is away; the node rejoins, the cluster goes green again, and every acknowledged ' +
    'document is readable.',
  timeoutMs: 60000,
  async run(t) {
    const es = await connect(t, 'client-restart');
    const h = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('the cluster forms and goes green', h.ok === true, { health: h });
    const acked = {};
    for (let i = 0; i < 3; i++) {
      const r = await es.index(`a${i}`, { n: i });
      t.check('an index request is acknowledged', r.ok === true, { reply: r });
      acked[`a${i}`] = i;
    }
    const node = h.primary;
    const rest = t.nodes.filter((n) => n !== node);
    const s = await es.shutdown(node);
    t.check('the node accepts the shutdown', s.ok === true, { reply: s });
    const h2 = await es.waitForCluster({ among: rest, minNodes: 4, where: (m) => !m.nodes.includes(node) && m.primary !== null && m.primary !== node });
    t.check('the replica is promoted once the node has left', h2.ok === true && h2.primary !== node, { health: h2 });
    for (let i = 0; i < 3; i++) {
      const r = await es.index(`b${i}`, { n: i }, { via: h2.master });
      t.check('writes succeed while the node is away', r.ok === true, { reply: r });
      acked[`b${i}`] = i;
    }
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
