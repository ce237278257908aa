// basic — the everyday behaviour of a healthy cluster.
import { connect } from './lib/client.mjs';

export default {
  name: 'basic',
  description:
    'Five nodes elect a master; the index turns green (a started primary and replica on ' +
    'two other nodes); documents indexed through every node are acknowledged and read back through every ' +
    'node; the primary and the replica hold the same documents.',
  timeoutMs: 60000,
  async run(t) {
    const es = await connect(t, 'client-basic');
    const h = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('the cluster forms with all nodes and goes green', h.ok === true, { health: h });
    t.note('cluster formed', { master: h.master, primary: h.primary, replicas: h.replicas });
    t.check('the shard copies are not on the master', h.primary !== h.master && h.replicas.every((r) => r.node !== h.master), { health: h });

    const acked = {};
    for (let i = 0; i < 15; i++) {
      const via = t.nodes[i % t.nodes.length];
      const r = await es.index(`doc${i}`, { n: i }, { via });
      t.check('an index request is acknowledged', r.ok === true, { via, reply: r });
      acked[`doc${i}`] = i;
    }
    const over = await es.index('doc0', { n: 100 });
    t.check('an overwrite is acknowledged', over.ok === true, { over });
    acked.doc0 = 100;
    for (const [id, n] of Object.entries(acked)) {
      const via = t.nodes[Number(id.slice(3)) % t.nodes.length];
      const g = await es.get(id, via);
      t.check('get returns the last acknowledged document', g.ok === true && g.doc?.n === n, { id, via, reply: g });
    }
    const missing = await es.get('nope', 'n2');
    t.check('get of an unknown id is not found', missing.ok === true && missing.found === false, { missing });

    const holders = [h.primary, ...h.replicas.map((r) => r.node)];
    for (const n of holders) {
      const s = await t.state(n);
      const diff = Object.entries(acked).filter(([id, v]) => s.docs[id]?.n !== v).map(([id]) => id);
      t.check('every shard copy holds every acknowledged document', diff.length === 0, { node: n, diff });
    }
  },
};
