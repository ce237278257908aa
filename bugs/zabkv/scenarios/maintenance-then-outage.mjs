// maintenance-then-outage — a follower is down for maintenance while a batch of writes goes on; then the power fails.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'maintenance-then-outage',
  description:
    'Four creates reach every server. One follower is stopped for maintenance and a batch of creates goes on, ' +
    'acknowledged by the leader and the other follower, until the leader has written a snapshot; the other follower ' +
    'writes its snapshot too. Then the power fails and the leader and that follower go down. The follower and the server ' +
    'back from maintenance come up first and elect a leader: every acknowledged create must be readable there, and writes ' +
    'must go on. After the former leader rejoins, every server must hold the same tree with every acknowledged znode.',
  timeoutMs: 150000,
  async run(t) {
    const zk = await connect(t, 'client-0');
    const first = await zk.findLeader(30000);
    t.check('a leader is elected', first !== null);
    await zk.waitServing(t.nodes, 30000);
    const L = first.id;
    const [A, B] = t.nodes.filter((n) => n !== L);
    const acked = {};
    const put = async (path, data) => {
      const r = await zk.create(path, data, { node: L });
      t.check('create is acknowledged', r.ok === true, { path, reply: r });
      acked[path] = data;
    };
    for (let i = 0; i < 4; i++) await put(`/a${i}`, `v${i}`);

    await t.kill(B);
    t.note('follower stopped for maintenance', { follower: B });
    let snapshotZxid = '0x0';
    let batch = 0;
    while (snapshotZxid === '0x0') {
      t.check('the leader writes a snapshot within 200 creates', batch < 200, { leader: L });
      await put(`/b${batch}`, `batch-${batch}`);
      batch += 1;
      snapshotZxid = (await t.state(L)).snapshotZxid;
    }
    await t.until(async () => (await t.state(A)).snapshotZxid === snapshotZxid, { timeoutMs: 10000, everyMs: 50, description: `the follower ${A} to write the snapshot at ${snapshotZxid}` });
    t.note('leader and follower have written their snapshot', { snapshotZxid, batch });

    await Promise.all([t.kill(L), t.kill(A)]);
    t.note('power failure: every server is down', {});
    await Promise.all([t.restart(A), t.restart(B)]);
    const second = await zk.findLeader(30000, [A, B]);
    t.check('the two restarted servers elect a leader', second !== null);
    const seen = {};
    for (const path of ['/a3', '/b0', `/b${batch - 1}`]) {
      const r = await zk.read(second.id, path);
      seen[path] = r.ok ? (r.found ? r.data : 'NONODE') : `error: ${r.error}`;
    }
    t.note('reads after the recovery', { node: second.id, seen });
    t.check('the acknowledged creates are readable after the recovery', Object.entries(seen).every(([p, v]) => v === acked[p]), { node: second.id, seen, status: await zk.statusAll() });
    const recovered = (await t.state(second.id)).tree ?? {};
    const missing = Object.keys(acked).filter((p) => recovered[p] !== acked[p]);
    t.check('every acknowledged create is on the new leader', missing.length === 0, { node: second.id, missing });
    const after = await zk.create('/after', 'x');
    t.check('a write after the recovery is acknowledged', after.ok === true, { after });
    acked['/after'] = 'x';

    await t.restart(L);
    const all = await zk.waitServing(t.nodes, 30000);
    t.check('every server serves again', all !== null, { status: await zk.statusAll() });
    const states = await converge(t, zk);
    t.note('servers at the end', { states: states.map(brief) });
    t.check('all servers hold the same tree', states.length === 3 && new Set(states.map((s) => s.digest)).size === 1, { states: states.map(brief) });
    for (const s of states) {
      const lost = Object.entries(acked).filter(([p, v]) => s.tree?.[p] !== v).map(([p]) => p);
      t.check('every acknowledged write is on every server', lost.length === 0, { node: s.id, lost });
    }
  },
};
