// primary-node-rejoins — the only up-to-date copy's node is cut off while another node is down, and comes back.
import { connect } from './lib/client.mjs';

export default {
  name: 'primary-node-rejoins',
  description:
    "With a green cluster and some documents, recoveries of new replicas are held up (a large shard) and the " +
    "replica's node is killed for good; documents are indexed into the primary alone. Then the primary's node is " +
    'partitioned from the others, which leaves no copy to promote, and the partition heals while the killed node ' +
    'stays down. The cluster must serve the index again from the returning node, go green on the four nodes, ' +
    'serve every acknowledged document and take writes.',
  timeoutMs: 60000,
  async run(t) {
    const es = await connect(t, 'client-0');
    const h = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('the cluster forms and goes green', h.ok === true, { health: h });
    const acked = {};
    for (let i = 0; i < 3; i++) {
      const r = await es.index(`a${i}`, { n: i });
      t.check('an index request is acknowledged', r.ok === true, { reply: r });
      acked[`a${i}`] = i;
    }
    const master = h.master;
    const primary = h.primary;
    const replica = h.replicas[0].node;

    for (const n of t.nodes) if (n !== primary) t.addLinkFault({ from: primary, to: n, type: 'internal:index/shard/recovery/start_recoveryResp', drop: 1 });
    await t.kill(replica);
    t.note('killed the node holding the replica; it stays down', { node: replica });
    const up = t.nodes.filter((n) => n !== replica);
    const h1 = await es.waitForCluster({ among: up, minNodes: 4, timeoutMs: 15000, where: (x) => !x.nodes.includes(replica) && x.primary === primary });
    t.check('the master removes the killed node', h1.ok === true, { health: h1 });
    for (let i = 0; i < 3; i++) {
      const r = await es.index(`b${i}`, { n: i }, { via: master });
      t.check('writes succeed with the primary alone', r.ok === true, { reply: r });
      acked[`b${i}`] = i;
    }

    const rest = up.filter((n) => n !== primary);
    t.partition([[primary], [...rest, replica]]);
    t.note('partitioned the node holding the primary', { node: primary });
    const h2 = await es.waitForCluster({ among: rest, minNodes: 3, timeoutMs: 15000, where: (x) => !x.nodes.includes(primary) });
    t.check('the master removes the partitioned node', h2.ok === true && h2.status === 'red', { health: h2 });

    t.heal();
    t.clearLinkFaults();
    t.note('the partition heals; the killed node stays down');
    const h3 = await es.waitForCluster({ among: up, minNodes: 4, status: 'green', timeoutMs: 20000 });
    t.check('the four nodes are green again', h3.ok === true, { health: h3 });
    const lost = [];
    for (const [id, n] of Object.entries(acked)) {
      const g = await es.get(id, master);
      if (!(g.ok === true && g.doc?.n === n)) lost.push({ id, reply: g });
    }
    t.check('every acknowledged document is readable', lost.length === 0, { lost, health: h3 });
    const after = await es.index('after', { n: 1 });
    t.check('writes succeed afterwards', after.ok === true, { after });
  },
};
