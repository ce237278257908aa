// basic — the everyday behaviour of a healthy cluster.
import { connect } from './lib/client.mjs';

export default {
  name: 'basic',
  description:
    'One RM becomes active and the other stays standby; both NodeManagers register; applications submitted ' +
    'through the failover proxy run their AM and finish; an idle node is gracefully decommissioned and leaves, ' +
    'and later applications still run on the remaining node.',
  timeoutMs: 120000,
  async run(t) {
    const yarn = await connect(t, 'client-basic');
    const active = await yarn.waitForActive(20000);
    t.check('exactly one RM is active', active !== null, { states: await yarn.haStates() });
    const standby = active === 'rm1' ? 'rm2' : 'rm1';
    const refused = await yarn.send(standby, 'SubmitApplication', { appId: 'probe' });
    t.check('the standby RM refuses client requests', refused.ok === false && refused.error === 'standby', { refused });
    const nodes = await yarn.waitForNodes();
    t.check('both NodeManagers are RUNNING', nodes.nm1 === 'RUNNING' && nodes.nm2 === 'RUNNING', { nodes });

    const apps = ['app_1', 'app_2', 'app_3'];
    for (const id of apps) {
      const r = await yarn.submit(id, 600, 2);
      t.check('submission is accepted', r.ok === true, { app: id, reply: r });
    }
    for (const id of apps) {
      const rep = await yarn.waitForFinal(id, 10000);
      t.check('the application finishes', rep?.state === 'FINISHED', { app: id, report: rep });
    }

    // Gracefully decommission a node with nothing on it.
    const idle = 'nm2';
    const dec = await yarn.call('RefreshNodes', { decommission: [idle], graceful: true });
    t.check('decommission is accepted', dec.ok === true, { dec });
    const left = t.waitFor((e) => e.kind === 'log' && e.msg === 'shutdown requested by the RM' && e.node === idle, {
      timeoutMs: 5000,
      description: 'the idle node to be told to shut down',
      includePast: true,
    });
    await left;
    const after = await yarn.nodes();
    t.check('the idle node is DECOMMISSIONED', after[idle] === 'DECOMMISSIONED', { nodes: after });
    for (const id of ['app_4', 'app_5']) {
      const r = await yarn.submit(id, 400, 2);
      t.check('submission is accepted', r.ok === true, { app: id, reply: r });
      const rep = await yarn.waitForFinal(id, 10000);
      t.check('later applications run on the remaining node', rep?.state === 'FINISHED' && rep.amNode === 'nm1', { app: id, report: rep });
    }
  },
};
