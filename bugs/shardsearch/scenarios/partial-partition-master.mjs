// partial-partition-master — the master loses three of the four other nodes; one node still reaches everyone.
import { connect } from './lib/client.mjs';

export default {
  name: 'partial-partition-master',
  description:
    'With a green cluster whose master is n1 and some documents, the links between n1 and n3, n4, n5 start ' +
    'dropping every message in both directions, while n2 still reaches every node (a partial partition). ' +
    'Four of the five nodes can talk to each other, so within a few seconds they must have a master and ' +
    'take writes. Then the links are repaired: all five nodes form one green cluster and every ' +
    'acknowledged document is readable.',
  timeoutMs: 60000,
  async run(t) {
    const es = await connect(t, 'client-0');
    let h = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('the cluster forms and goes green', h.ok === true, { health: h });
    // The scenario needs n1 as master: if another node won the first election, restart it once.
    for (let i = 0; i < 2 && h.master !== 'n1'; i++) {
      const m = h.master;
      t.note('making n1 the master', { master: m });
      await t.kill(m);
      const without = await es.waitForCluster({ among: t.nodes.filter((n) => n !== m), minNodes: 4, where: (x) => !x.nodes.includes(m) });
      t.check('the cluster re-forms without the killed master', without.ok === true, { health: without });
      await t.restart(m);
      h = await es.waitForCluster({ minNodes: 5, status: 'green' });
      t.check('the cluster is green again', h.ok === true, { health: h });
    }
    t.check('n1 is the master', h.master === 'n1', { health: h });

    const acked = {};
    for (let i = 0; i < 5; i++) {
      const r = await es.index(`a${i}`, { n: i });
      t.check('an index request is acknowledged', r.ok === true, { reply: r });
      acked[`a${i}`] = i;
    }
    for (const n of ['n3', 'n4', 'n5']) {
      t.addLinkFault({ from: 'n1', to: n, drop: 1 });
      t.addLinkFault({ from: n, to: 'n1', drop: 1 });
    }
    t.note('links between n1 and n3, n4, n5 drop everything; n2 reaches all nodes');
    const rest = ['n2', 'n3', 'n4', 'n5'];
    const h2 = await es.waitForCluster({ among: rest, minNodes: 3, timeoutMs: 6000, where: (x) => x.master !== 'n1' });
    t.check('the four connected nodes elect a master', h2.ok === true, { health: h2 });
    for (let i = 0; i < 3; i++) {
      const r = await es.index(`b${i}`, { n: i }, { via: h2.master, timeoutMs: 4000 });
      t.check('writes succeed during the partial partition', r.ok === true, { reply: r });
      acked[`b${i}`] = i;
    }
    t.clearLinkFaults();
    t.note('links repaired');
    const h3 = await es.waitForCluster({ minNodes: 5, status: 'green' });
    t.check('all five nodes form one green cluster', h3.ok === true, { health: h3 });
    for (const [id, n] of Object.entries(acked)) {
      const g = await es.get(id, h3.master);
      t.check('every acknowledged document is readable', g.ok === true && g.doc?.n === n, { id, reply: g });
    }
  },
};
