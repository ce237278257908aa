// decommission-during-am-launch — a node is gracefully decommissioned just as
// an application's AM container is placed on it.
import { connect } from './lib/client.mjs';

export default {
  name: 'decommission-during-am-launch',
  description:
    'An application with max attempts 1 is submitted to an idle cluster; as soon as the scheduler places its AM ' +
    'container on a node, that node is gracefully decommissioned. The application must finish, the node must ' +
    'leave once the AM is done, and a later application must run on the other node.',
  timeoutMs: 120000,
  async run(t) {
    const yarn = await connect(t, 'client-admin');
    const active = await yarn.waitForActive(20000);
    t.check('exactly one RM is active', active !== null, { states: await yarn.haStates() });
    const nodes = await yarn.waitForNodes();
    t.check('both NodeManagers are RUNNING', nodes.nm1 === 'RUNNING' && nodes.nm2 === 'RUNNING', { nodes });

    const assigned = t.background(() => t.waitFor((e) => e.kind === 'log' && e.msg === 'assigned container' && e.fields?.app === 'app_job', {
      timeoutMs: 5000,
      description: 'the AM container of app_job to be placed',
    }));
    const sub = await yarn.send(active, 'SubmitApplication', { appId: 'app_job', durationMs: 1200, maxAttempts: 1 });
    t.check('submission is accepted', sub.ok === true, { sub });
    const ev = await assigned;
    const node = String(ev.fields.node);
    const dec = await yarn.send(active, 'RefreshNodes', { decommission: [node], graceful: true });
    t.check('graceful decommission is accepted', dec.ok === true, { node, dec });
    t.note('decommissioning the AM node', { node });

    const rep = await yarn.waitForFinal('app_job', 10000);
    t.check('the application with one attempt finishes', rep?.state === 'FINISHED' && rep.attempts === 1, { report: rep });
    const left = t.waitFor((e) => e.kind === 'log' && e.msg === 'node deactivated' && e.fields?.node === node, {
      timeoutMs: 10000,
      description: 'the decommissioning node to leave once its AM is done',
      includePast: true,
    });
    await left;
    const after = await yarn.nodes();
    t.check('the node ends DECOMMISSIONED', after[node] === 'DECOMMISSIONED', { nodes: after });

    const other = node === 'nm1' ? 'nm2' : 'nm1';
    t.check('a later submission is accepted', (await yarn.submit('app_next', 400, 1)).ok === true);
    const next = await yarn.waitForFinal('app_next', 10000);
    t.check('a later application runs on the other node', next?.state === 'FINISHED' && next.amNode === other, { report: next });
  },
};
