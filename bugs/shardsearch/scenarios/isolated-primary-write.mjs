// isolated-primary-write — a write reaches the primary's node just as it is cut off from the rest.
import { connect } from './lib/client.mjs';

export default {
  name: 'isolated-primary-write',
  description:
    'With a green cluster and some documents, the node holding the primary is partitioned from every other ' +
    'node (messages are dropped silently; clients still reach it) and a document is indexed through it. The ' +
    'master promotes the replica and the cluster takes more writes. The partition heals, the node rejoins and ' +
    'the cluster goes green again: every acknowledged document must be readable, and writes must succeed.',
  timeoutMs: 60000,
  async run(t) {
    const es = await connect(t, 'client-0');
    const h = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('the cluster forms and goes green', h.ok === true, { health: h });
    const acked = {};
    for (let i = 0; i < 5; i++) {
      const r = await es.index(`a${i}`, { n: i });
      t.check('an index request is acknowledged', r.ok === true, { reply: r });
      acked[`a${i}`] = i;
    }
    const isolated = h.primary;
    const rest = t.nodes.filter((n) => n !== isolated);
    t.partition([[isolated], rest]);
    t.note('partitioned the node holding the primary', { node: isolated });
    const during = await es.send(isolated, 'index', { id: 'during-partition', doc: { n: -1 } }, 4000);
    t.note('reply to the write sent to the isolated node', { reply: during });
    if (during.ok) acked['during-partition'] = -1;

    const h2 = await es.waitForCluster({ among: rest, minNodes: 4, where: (m) => !m.nodes.includes(isolated) && m.primary !== null });
    t.check('the majority side keeps a master and promotes a new primary', h2.ok === true && h2.primary !== null && h2.primary !== isolated, { health: h2 });
    for (let i = 0; i < 3; i++) {
      const r = await es.index(`b${i}`, { n: i }, { via: h2.master });
      t.check('writes succeed on the majority side', r.ok === true, { reply: r });
      acked[`b${i}`] = i;
    }
    t.heal();
    t.note('partition healed');
    const h3 = await es.waitForCluster({ minNodes: 5, status: 'green' });
    t.check('the isolated node rejoins and the cluster goes green', h3.ok === true, { health: h3 });
    const after = await es.index('after-heal', { n: 1 });
    t.check('writes succeed after the heal', after.ok === true, { after });
    acked['after-heal'] = 1;
    const lost = [];
    for (const [id, n] of Object.entries(acked)) {
      const g = await es.get(id, h3.master);
      if (!(g.ok === true && g.doc?.n === n)) lost.push({ id, reply: g });
    }
    t.check('every acknowledged document is readable', lost.length === 0, { lost });
  },
};
