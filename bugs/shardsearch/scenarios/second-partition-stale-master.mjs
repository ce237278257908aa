// second-partition-stale-master — a node cut off in a first partition comes back just as a second one isolates the master.
import { connect } from './lib/client.mjs';

export default {
  name: 'second-partition-stale-master',
  description:
    'With a green cluster whose replica sits on the lowest-id node other than the master (node restarts move it ' +
    'there if needed), that node is partitioned away; the master fails its copy, a new replica is recovered, and ' +
    'documents are indexed. Then the network changes at once: the node is back with the others, but the master ' +
    'is now cut off alone. The four connected nodes must elect a master and be green; then the node holding the ' +
    'primary is killed, and after the promotion every acknowledged document must be readable. Finally the network ' +
    'heals, the killed node restarts, and the five nodes form one green cluster that takes writes.',
  timeoutMs: 120000,
  async run(t) {
    const es = await connect(t, 'client-0');
    let h = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('the cluster forms and goes green', h.ok === true, { health: h });
    const master = h.master;
    const others = t.nodes.filter((n) => n !== master).sort();
    const low = others[0];

    // Put the replica on `low`: a killed copy's node is refilled by the lowest free node.
    for (let i = 0; i < 3 && h.replicas[0]?.node !== low; i++) {
      const victim = h.primary === low ? low : h.replicas[0].node;
      t.note('moving the replica to the lowest-id data node', { low, victim, primary: h.primary, replicas: h.replicas });
      await t.kill(victim);
      const without = await es.waitForCluster({ among: t.nodes.filter((n) => n !== victim), minNodes: 4, status: 'green', timeoutMs: 15000, where: (x) => !x.nodes.includes(victim) });
      t.check('the cluster is green without the killed node', without.ok === true, { health: without });
      await t.restart(victim);
      h = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 15000 });
      t.check('the restarted node rejoins and the cluster is green', h.ok === true, { health: h });
    }
    t.check('the replica is on the lowest-id data node', h.master === master && h.replicas[0]?.node === low, { low, health: h });

    const acked = {};
    for (let i = 0; i < 5; i++) {
      const r = await es.index(`a${i}`, { n: i });
      t.check('an index request is acknowledged', r.ok === true, { reply: r });
      acked[`a${i}`] = i;
    }

    const rest = t.nodes.filter((n) => n !== low);
    t.partition([[low], rest]);
    t.note('first partition: the replica holder is cut off', { node: low });
    const h1 = await es.waitForCluster({ among: rest, minNodes: 4, status: 'green', timeoutMs: 15000, where: (x) => !x.nodes.includes(low) });
    t.check('the master replaces the lost replica and the cluster is green', h1.ok === true && h1.master === master, { health: h1 });
    for (let i = 0; i < 5; i++) {
      const r = await es.index(`p${i}`, { n: i }, { via: master });
      t.check('writes succeed during the first partition', r.ok === true, { reply: r });
      acked[`p${i}`] = i;
    }

    t.partition([[master], others]);
    t.note('second partition: the cut-off node is back with the others, the master is cut off alone', { master });
    const h2 = await es.waitForCluster({ among: others, minNodes: 4, status: 'green', timeoutMs: 20000, where: (x) => x.master !== master });
    t.check('the four connected nodes elect a master and are green', h2.ok === true, { health: h2 });

    const primary = h2.primary;
    await t.kill(primary);
    t.note('killed the node holding the primary', { node: primary });
    const left = others.filter((n) => n !== primary);
    const h3 = await es.waitForCluster({ among: left, minNodes: 3, timeoutMs: 15000, where: (x) => !x.nodes.includes(primary) && x.primary !== null && x.primary !== primary });
    t.check('a copy is promoted to primary', h3.ok === true, { health: h3 });
    const lost = [];
    for (const [id, n] of Object.entries(acked)) {
      const g = await es.get(id, h3.master);
      if (!(g.ok === true && g.doc?.n === n)) lost.push({ id, reply: g });
    }
    t.check('every acknowledged document is readable after the promotion', lost.length === 0, { lost, health: h3 });

    t.heal();
    await t.restart(primary);
    t.note('network healed and the killed node restarted');
    const h4 = await es.waitForCluster({ minNodes: 5, status: 'green', timeoutMs: 20000 });
    t.check('all five nodes form one green cluster', h4.ok === true, { health: h4 });
    const after = await es.index('after', { n: 1 });
    t.check('writes succeed afterwards', after.ok === true, { after });
  },
};
