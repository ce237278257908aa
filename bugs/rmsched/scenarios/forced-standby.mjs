// forced-standby — an operator moves the active RM to standby by hand while
// automatic failover is on; the other RM must take over.
import { connect } from './lib/client.mjs';

export default {
  name: 'forced-standby',
  description:
    'Applications run under the active RM; an operator forces it to standby (TransitionToStandby with ' +
    'forcemanual). The other RM must become ACTIVE, the NodeManagers follow it, applications submitted ' +
    'afterwards finish, and the RM moved by hand stays standby.',
  timeoutMs: 60000,
  async run(t) {
    const yarn = await connect(t, 'client-admin');
    const a = await yarn.waitForActive(20000);
    t.check('exactly one RM is active', a !== null, { states: await yarn.haStates() });
    const b = a === 'rm1' ? 'rm2' : 'rm1';
    await yarn.waitForNodes();
    t.check('app_1 is accepted', (await yarn.submit('app_1', 300, 2)).ok === true);
    t.check('app_1 finishes', (await yarn.waitForFinal('app_1'))?.state === 'FINISHED');

    const r = await yarn.send(a, 'TransitionToStandby', { forcemanual: true });
    t.check('the forced transition to standby is accepted', r.ok === true, { reply: r });
    const active = await yarn.waitForActive(10000);
    const states = await yarn.haStates();
    t.check('the other RM takes over after the forced transition', active === b, { states });

    await yarn.waitForNodes();
    t.check('app_2 is accepted', (await yarn.submit('app_2', 300, 2)).ok === true);
    const rep = await yarn.waitForFinal('app_2', 10000);
    t.check('applications submitted after the forced transition finish', rep?.state === 'FINISHED', { report: rep, states: await yarn.haStates() });
    const old = await yarn.call('GetApplicationReport', { appId: 'app_1' });
    t.check('earlier applications are still FINISHED', old.ok === true && old.app.state === 'FINISHED', { reply: old });
    await t.sleep(1500);
    const after = await yarn.haStates();
    t.check('the RM moved by hand stays standby', after[a] === 'STANDBY' && after[b] === 'ACTIVE', { states: after });
  },
};
