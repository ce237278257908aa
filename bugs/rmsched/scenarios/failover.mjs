// failover — losing the active RM.
import { connect } from './lib/client.mjs';

export default {
  name: 'failover',
  description:
    'Applications run under the active RM; the active RM is killed: the standby takes over, recovers the ' +
    'finished applications from the state store, the NodeManagers follow it and new applications run; the old ' +
    'RM is restarted and stays standby.',
  timeoutMs: 120000,
  async run(t) {
    const yarn = await connect(t, 'client-failover');
    const first = await yarn.waitForActive(20000);
    t.check('exactly one RM is active', first !== null, { states: await yarn.haStates() });
    await yarn.waitForNodes();
    for (const id of ['app_1', 'app_2']) {
      t.check('submission is accepted', (await yarn.submit(id, 500, 2)).ok === true, { app: id });
      const rep = await yarn.waitForFinal(id, 10000);
      t.check('the application finishes', rep?.state === 'FINISHED', { app: id, report: rep });
    }

    await t.kill(first);
    const second = first === 'rm1' ? 'rm2' : 'rm1';
    await t.waitFor((e) => e.kind === 'log' && e.msg === 'transitioned to active' && e.node === second, {
      timeoutMs: 20000,
      description: 'the standby RM to take over',
      includePast: true,
    });
    const nodes = await yarn.waitForNodes();
    t.check('the NodeManagers register with the new active RM', nodes.nm1 === 'RUNNING' && nodes.nm2 === 'RUNNING', { nodes });
    for (const id of ['app_1', 'app_2']) {
      const r = await yarn.call('GetApplicationReport', { appId: id });
      t.check('finished applications are recovered', r.ok === true && r.app.state === 'FINISHED', { app: id, reply: r });
    }
    for (const id of ['app_3', 'app_4']) {
      t.check('submission is accepted', (await yarn.submit(id, 500, 2)).ok === true, { app: id });
      const rep = await yarn.waitForFinal(id, 10000);
      t.check('applications run under the new active RM', rep?.state === 'FINISHED', { app: id, report: rep });
    }

    await t.restart(first);
    await t.waitFor((e) => e.kind === 'log' && e.msg === 'zk session established' && e.node === first, {
      timeoutMs: 20000,
      description: 'the old RM to reconnect',
      includePast: true,
    });
    await t.sleep(500);
    const states = await yarn.haStates();
    t.check('the restarted RM stays standby', states[first] === 'STANDBY' && states[second] === 'ACTIVE', { states });
  },
};
