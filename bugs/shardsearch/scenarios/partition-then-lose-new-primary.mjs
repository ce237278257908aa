// partition-then-lose-new-primary — the primary's node is partitioned away, the promoted copy takes writes, and
// then its node goes down before the old primary's node is back.
import { connect } from './lib/client.mjs';

export default {
  name: 'partition-then-lose-new-primary',
  description:
    "With a green cluster and some documents, recoveries of new replicas are held up (a large shard), and the " +
    "node holding the primary is partitioned from the others; the replica is promoted and documents are " +
    "indexed into it. Then the node holding the new primary is killed, and the partition heals. While the only " +
    'copy with every acknowledged document is down, no read may miss one of them; once that node is restarted ' +
    'the cluster must go green, serve every acknowledged document and take writes.',
  timeoutMs: 90000,
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
    const oldPrimary = h.primary;
    const replica = h.replicas[0].node;

    // A big shard: copying it to a new replica takes longer than the rest of the run.
    for (const n of t.nodes) if (n !== replica) t.addLinkFault({ from: replica, to: n, type: 'internal:index/shard/recovery/start_recoveryResp', drop: 1 });
    const rest = t.nodes.filter((n) => n !== oldPrimary);
    t.partition([[oldPrimary], rest]);
    t.note('partitioned the node holding the primary', { node: oldPrimary });
    const h1 = await es.waitForCluster({ among: rest, minNodes: 4, timeoutMs: 15000, where: (x) => !x.nodes.includes(oldPrimary) && x.primary === replica });
    t.check('the replica is promoted once the node has left', h1.ok === true && h1.master === master, { health: h1 });
    for (let i = 0; i < 3; i++) {
      const r = await es.index(`b${i}`, { n: i }, { via: master });
      t.check('writes succeed during the partition', r.ok === true, { reply: r });
      acked[`b${i}`] = i;
    }

    await t.kill(replica);
    t.note('killed the node holding the new primary', { node: replica });
    const up = rest.filter((n) => n !== replica);
    const h2 = await es.waitForCluster({ among: up, minNodes: 3, timeoutMs: 15000, where: (x) => !x.nodes.includes(replica) });
    t.check('the master removes the killed node', h2.ok === true, { health: h2 });

    t.heal();
    t.note('the partition heals');
    const back = t.nodes.filter((n) => n !== replica);
    const h3 = await es.waitForCluster({ among: back, minNodes: 4, timeoutMs: 15000, where: (x) => x.nodes.includes(oldPrimary) });
    t.check('the partitioned node rejoins', h3.ok === true, { health: h3 });
    await t.sleep(3000);
    const h4 = await es.health(master);
    t.note('cluster health while the killed node is down', { health: h4 });
    const missed = [];
    for (const [id, n] of Object.entries(acked)) {
      const g = await es.get(id, master);
      if (g.ok === true && g.doc?.n !== n) missed.push({ id, reply: g });
    }
    t.check('no read misses an acknowledged document while the killed node is down', missed.length === 0, { missed, health: h4 });

    t.clearLinkFaults();
    await t.restart(replica);
    t.note('restarted the killed node', { node: replica });
    const h5 = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('all five nodes form one green cluster', h5.ok === true, { health: h5 });
    const lost = [];
    for (const [id, n] of Object.entries(acked)) {
      const g = await es.get(id, h5.master ?? master);
      if (!(g.ok === true && g.doc?.n === n)) lost.push({ id, reply: g });
    }
    t.check('every acknowledged document is readable', lost.length === 0, { lost, health: h5 });
    const after = await es.index('after', { n: 1 });
    t.check('writes succeed afterwards', after.ok === true, { after });
  },
};
