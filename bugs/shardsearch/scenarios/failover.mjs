// failover — a data node and then the master are killed and come back.
import { connect } from './lib/client.mjs';

export default {
  name: 'failover',
  description:
    'With a green cluster and some documents, the node holding the primary is killed: the master promotes ' +
    'the replica, allocates a new replica, and the documents stay readable and writable. Then the master is ' +
    'killed: the other nodes elect a new master. Both killed nodes are restarted and rejoin; the cluster is ' +
    'green again with every acknowledged document.',
  timeoutMs: 60000,
  async run(t) {
    const es = await connect(t, 'client-failover');
    const h = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('the cluster forms and goes green', h.ok === true, { health: h });
    const acked = {};
    for (let i = 0; i < 8; i++) {
      const r = await es.index(`a${i}`, { n: i });
      t.check('an index request is acknowledged', r.ok === true, { reply: r });
      acked[`a${i}`] = i;
    }

    const oldPrimary = h.primary;
    await t.kill(oldPrimary);
    t.note('killed the node holding the primary', { node: oldPrimary });
    const others = t.nodes.filter((n) => n !== oldPrimary);
    const h2 = await es.waitForCluster({ among: others, minNodes: 4, status: 'green', where: (m) => !m.nodes.includes(oldPrimary) });
    t.check('the replica is promoted and a new replica allocated', h2.ok === true && h2.primary !== oldPrimary, { health: h2 });
    for (let i = 0; i < 5; i++) {
      const r = await es.index(`b${i}`, { n: i }, { via: h2.master });
      t.check('writes succeed after the promotion', r.ok === true, { reply: r });
      acked[`b${i}`] = i;
    }

    const oldMaster = h2.master;
    await t.kill(oldMaster);
    t.note('killed the master', { node: oldMaster });
    const rest = others.filter((n) => n !== oldMaster);
    const h3 = await es.waitForCluster({ among: rest, minNodes: 3, where: (m) => m.master !== oldMaster });
    t.check('the remaining nodes elect a new master', h3.ok === true && h3.master !== oldMaster, { health: h3 });

    await t.restart(oldPrimary);
    await t.restart(oldMaster);
    t.note('restarted both nodes');
    const h4 = await es.waitForCluster({ minNodes: 5, status: 'green' });
    t.check('both nodes rejoin and the cluster is green', h4.ok === true, { health: h4 });
    const r = await es.index('c0', { n: 0 });
    t.check('writes succeed after the rejoin', r.ok === true, { reply: r });
    acked.c0 = 0;
    for (const [id, n] of Object.entries(acked)) {
      const g = await es.get(id, h4.master);
      t.check('every acknowledged document is readable', g.ok === true && g.doc?.n === n, { id, reply: g });
    }
  },
};
