// forced-failover-after-pause — the active RM stalls and loses its ZooKeeper
// session, later becomes active again, and an operator then forces the other
// RM active.
import { connect } from './lib/client.mjs';

const logged = (t, node, msg, description, timeoutMs = 20000) =>
  t.waitFor((e) => e.kind === 'log' && e.node === node && e.msg === msg, { timeoutMs, description, includePast: false });

export default {
  name: 'forced-failover-after-pause',
  description:
    'The active RM is paused past its ZooKeeper session timeout, so the standby takes over; the paused RM ' +
    'resumes as standby. The new active RM is then killed and the first RM becomes active again; the killed RM ' +
    'is restarted. Finally an operator forces the restarted RM active (forcemanual). Exactly one RM must end ' +
    'ACTIVE and applications submitted afterwards must finish.',
  timeoutMs: 120000,
  async run(t) {
    const yarn = await connect(t, 'client-admin');
    const a = await yarn.waitForActive(20000);
    t.check('exactly one RM is active', a !== null, { states: await yarn.haStates() });
    const b = a === 'rm1' ? 'rm2' : 'rm1';
    await yarn.waitForNodes();

    // 1. The active RM stalls (a long GC pause, say) past its session timeout.
    const takeover = t.background(() => logged(t, b, 'transitioned to active', 'the standby to take over while the active RM is paused'));
    await t.pause(a);
    await takeover;
    await t.sleep(200);
    const demoted = t.background(() => logged(t, a, 'transitioned to standby', 'the paused RM to step down after it resumes'));
    await t.resume(a);
    await demoted;
    await t.sleep(300);
    t.note('the first RM stepped down after its pause', { states: await yarn.haStates() });

    // 2. The new active RM dies; the first one takes over again; the dead one comes back.
    const back = t.background(() => logged(t, a, 'transitioned to active', 'the first RM to become active again'));
    await t.kill(b);
    await back;
    await yarn.waitForNodes();
    t.check('app_2 is accepted', (await yarn.submit('app_2', 300, 2)).ok === true);
    t.check('app_2 finishes', (await yarn.waitForFinal('app_2'))?.state === 'FINISHED');
    const rejoined = t.background(() => logged(t, b, 'zk session established', 'the restarted RM to reconnect'));
    await t.restart(b);
    await rejoined;
    await t.sleep(300);

    // 3. An operator forces the restarted RM active.
    const forced = t.background(() => logged(t, b, 'transitioned to active', 'the forced RM to become active'));
    const r = await yarn.send(b, 'TransitionToActive', { forcemanual: true });
    t.check('the forced transition is accepted', r.ok === true, { reply: r });
    await forced;
    const active = await yarn.waitForActive(8000);
    const states = await yarn.haStates();
    t.check('exactly one RM is ACTIVE after the forced failover', active !== null, { states });

    t.check('app_3 is accepted', (await yarn.submit('app_3', 300, 2)).ok === true);
    const rep = await yarn.waitForFinal('app_3', 10000);
    t.check('applications submitted after the forced failover finish', rep?.state === 'FINISHED', { report: rep, states: await yarn.haStates() });
    const old = await yarn.call('GetApplicationReport', { appId: 'app_2' });
    t.check('earlier applications are still FINISHED', old.ok === true && old.app.state === 'FINISHED', { reply: old });
  },
};
