// partial-partition-split-brain — the master loses two of the four other nodes, which still reach the other two.
import { connect } from './lib/client.mjs';

export default {
  name: 'partial-partition-split-brain',
  description:
    'With a green cluster and some documents, the links between the master and two other nodes (the ' +
    'lowest and the highest id among the non-master nodes) drop every message in both directions; the other ' +
    'two nodes still reach every node. For a few seconds the health of every node is polled: at no moment may ' +
    'two nodes report themselves as master, and the master keeps the two nodes it still reaches. Then the links ' +
    'are repaired: all five nodes form one green cluster, writes succeed and every acknowledged document is readable.',
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

    const master = h.master;
    const others = t.nodes.filter((n) => n !== master).sort();
    const cut = [others[0], others[others.length - 1]];
    const reached = others.filter((n) => !cut.includes(n));
    for (const n of cut) {
      t.addLinkFault({ from: master, to: n, drop: 1 });
      t.addLinkFault({ from: n, to: master, drop: 1 });
    }
    t.note('links between the master and two nodes drop everything', { master, cut, reached });

    // Every node's own view, polled: a node whose health names itself as master acts as one.
    const d = t.deadline(5000);
    const splits = [];
    while (!d.expired) {
      const hs = await Promise.all(t.nodes.map((n) => es.health(n)));
      const masters = hs.filter((x) => x.ok && x.node === x.master).map((x) => ({ node: x.node, nodes: x.nodes, version: x.version }));
      if (masters.length > 1) splits.push(masters);
      await t.sleep(100);
    }
    t.check('no two nodes act as master at the same time', splits.length === 0, { master, cut, twoMasters: splits.slice(0, 3) });
    const kept = await es.waitForCluster({ among: [master, ...reached], minNodes: 3, timeoutMs: 4000, where: (x) => x.master === master });
    t.check('the master keeps the nodes it still reaches', kept.ok === true, { health: kept });

    t.clearLinkFaults();
    t.note('links repaired');
    const h2 = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('all five nodes form one green cluster', h2.ok === true, { health: h2 });
    for (let i = 0; i < 3; i++) {
      const r = await es.index(`b${i}`, { n: i });
      t.check('writes succeed after the repair', r.ok === true, { reply: r });
      acked[`b${i}`] = i;
    }
    for (const [id, n] of Object.entries(acked)) {
      const g = await es.get(id, h2.master);
      t.check('every acknowledged document is readable', g.ok === true && g.doc?.n === n, { id, reply: g });
    }
  },
};
