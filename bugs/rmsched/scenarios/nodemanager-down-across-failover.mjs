// nodemanager-down-across-failover — a NodeManager host goes down, and the active
// RM goes down with it before the node has expired.
import { connect } from './lib/client.mjs';
import { poll } from '../../lib/scenario-lib.mjs';

export default {
  name: 'nodemanager-down-across-failover',
  description:
    'Both NodeManagers run under the active RM; one NodeManager is killed, then the active RM is killed before ' +
    'the node expires. The new active RM must account for every NodeManager of the cluster: the live one RUNNING, ' +
    'the dead one LOST (never RUNNING); applications must run on the live node, and the dead node must come back ' +
    'RUNNING once it is restarted.',
  timeoutMs: 120000,
  async run(t) {
    const yarn = await connect(t, 'client-ops');
    const first = await yarn.waitForActive(20000);
    t.check('exactly one RM is active', first !== null, { states: await yarn.haStates() });
    const before = await yarn.waitForNodes();
    t.check('both NodeManagers are RUNNING', before.nm1 === 'RUNNING' && before.nm2 === 'RUNNING', { nodes: before });

    const dead = t.random() < 0.5 ? 'nm1' : 'nm2';
    const live = dead === 'nm1' ? 'nm2' : 'nm1';
    await t.kill(dead);
    await t.sleep(200 + Math.floor(t.random() * 800));
    await t.kill(first);
    const second = first === 'rm1' ? 'rm2' : 'rm1';
    await t.waitFor((e) => e.kind === 'log' && e.msg === 'transitioned to active' && e.node === second, {
      timeoutMs: 20000,
      description: 'the standby RM to take over',
      includePast: true,
    });
    const up = await yarn.waitForNodes([live]);
    t.check('the live NodeManager registers with the new active RM', up[live] === 'RUNNING', { nodes: up });

    const seen = [];
    const lost = await poll(t, async () => {
      const nodes = await yarn.nodes();
      seen.push(nodes[dead] ?? 'unlisted');
      return nodes;
    }, { timeoutMs: 2500, done: (nodes) => nodes[dead] === 'LOST' });
    t.check('the new active RM reports the dead NodeManager LOST', lost.value?.[dead] === 'LOST', { dead, nodes: lost.value, seen });
    t.check('the dead NodeManager is never reported RUNNING', !seen.includes('RUNNING'), { dead, seen });

    t.check('a submission is accepted', (await yarn.submit('app_after', 400, 1)).ok === true);
    const rep = await yarn.waitForFinal('app_after', 10000);
    t.check('an application runs on the live node', rep?.state === 'FINISHED' && rep.amNode === live, { report: rep });

    await t.restart(dead);
    const back = await yarn.waitForNodes();
    t.check('the restarted NodeManager comes back RUNNING', back.nm1 === 'RUNNING' && back.nm2 === 'RUNNING', { nodes: back });
  },
};
