// active-again-after-pause — with the standby RM down, the active RM stalls past
// its ZooKeeper session timeout; it steps down when it resumes and, being the
// only RM, becomes active again.
import { connect } from './lib/client.mjs';

const logged = (t, node, msg, description, timeoutMs = 20000) =>
  t.waitFor((e) => e.kind === 'log' && e.node === node && e.msg === msg, { timeoutMs, description, includePast: false });

export default {
  name: 'active-again-after-pause',
  description:
    'The standby RM is killed; the active RM is then paused past its ZooKeeper session timeout. It resumes, steps ' +
    'down and, being the only RM, becomes active again; it must then stay ACTIVE and an ' +
    'application submitted to it must finish with a single AM launch. Then the killed RM is restarted and an operator ' +
    'forces it active (forcemanual): exactly one RM must end ACTIVE.',
  timeoutMs: 120000,
  async run(t) {
    const yarn = await connect(t, 'client-admin');
    const a = await yarn.waitForActive(20000);
    t.check('exactly one RM is active', a !== null, { states: await yarn.haStates() });
    const b = a === 'rm1' ? 'rm2' : 'rm1';
    await yarn.waitForNodes();
    t.check('app_1 is accepted', (await yarn.submit('app_1', 300, 2)).ok === true);
    t.check('app_1 finishes', (await yarn.waitForFinal('app_1'))?.state === 'FINISHED');

    // 1. The standby RM is down (a host outage, say) when the active RM stalls (a long GC
    // pause) past its ZooKeeper session timeout.
    await t.kill(b);
    await t.sleep(300);
    await t.pause(a);
    await t.waitFor((e) => e.kind === 'log' && e.node === 'zk' && e.msg === 'ephemeral lock released', { timeoutMs: 20000, description: 'the paused RM to lose its ZooKeeper session' });
    await t.sleep(500);

    // 2. The stalled RM resumes and, with nobody else running, becomes active again.
    const back = t.background(() => logged(t, a, 'transitioned to active', 'the resumed RM to become active again'));
    await t.resume(a);
    const activeAgain = await back;
    t.note('the resumed RM is active again', { states: await yarn.haStates() });
    t.check('app_2 is accepted', (await yarn.submit('app_2', 2500, 2)).ok === true);
    const seen = new Set();
    for (let i = 0; i < 12; i++) {
      seen.add((await yarn.haStates())[a]);
      await t.sleep(250);
    }
    const demotions = t.events().filter((e) => e.kind === 'log' && e.node === a && e.msg === 'transitioned to standby' && e.ts > activeAgain.ts);
    t.check('the resumed RM stays ACTIVE while nothing fences it', demotions.length === 0 && seen.size === 1 && seen.has('ACTIVE'), { seen: [...seen], demotions: demotions.length });
    const rep = await yarn.waitForFinal('app_2', 15000);
    const launches = t.events().filter((e) => e.kind === 'log' && e.msg === 'container started' && e.fields?.app === 'app_2').length;
    t.check('app_2 finishes with a single AM launch', rep?.state === 'FINISHED' && launches === 1, { report: rep, launches });

    // 3. The dead RM comes back and an operator forces it active: the other one must step down.
    const rejoined = t.background(() => logged(t, b, 'zk session established', 'the restarted RM to reconnect'));
    await t.restart(b);
    await rejoined;
    await t.sleep(300);
    const forced = t.background(() => logged(t, b, 'transitioned to active', 'the forced RM to become active'));
    const r = await yarn.send(b, 'TransitionToActive', { forcemanual: true });
    t.check('the forced transition is accepted', r.ok === true, { reply: r });
    await forced;
    const active = await yarn.waitForActive(8000);
    t.check('exactly one RM is ACTIVE after the forced failover', active !== null, { states: await yarn.haStates() });
    t.check('app_3 is accepted', (await yarn.submit('app_3', 300, 2)).ok === true);
    const rep3 = await yarn.waitForFinal('app_3', 10000);
    t.check('applications submitted after the forced failover finish', rep3?.state === 'FINISHED', { report: rep3, states: await yarn.haStates() });
  },
};
