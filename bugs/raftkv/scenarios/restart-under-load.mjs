// restart-under-load — a follower is killed while writes stream in, then restarted.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'restart-under-load',
  description:
    'Three clients write distinct keys through the leader without pause. A follower is killed (SIGKILL) in the ' +
    'middle of the stream, between two commits of its backend, and restarted while the writes go on. Once it has caught up, every member must hold ' +
    'the same data, including every acknowledged write.',
  timeoutMs: 120000,
  config: { batchIntervalMs: 2000 },
  async run(t) {
    const kv = await connect(t, 'client-0');
    const leader = await kv.findLeader(15000);
    t.check('a leader is elected', leader !== null);
    const followers = t.nodes.filter((n) => n !== leader.id);
    const victim = followers[Math.floor(t.random() * followers.length)];

    const acked = {};
    let writing = true;
    const writer = async (w) => {
      const c = w === 0 ? kv : await connect(t, `client-${w}`);
      for (let i = 0; writing && i < 150; i++) {
        const key = `w${w}/${i}`;
        const r = await c.put(key, `v${i}`, {});
        if (r.ok) acked[key] = `v${i}`;
        await t.sleep(15);
      }
    };
    const writers = [0, 1, 2].map((w) => writer(w));

    // Kill the follower halfway between two commits of its backend, with writes flowing.
    await t.sleep(500);
    await t.waitFor((e) => e.kind === 'log' && e.node === victim && e.msg === 'backend commit', {
      timeoutMs: 10000,
      description: "a commit of the follower's backend",
    });
    await t.sleep(600 + Math.floor(t.random() * 600));
    const before = await t.state(victim).catch(() => null);
    t.note('killing a follower mid-stream', { victim, state: brief(before) });
    await t.kill(victim);
    await t.sleep(500);
    await t.restart(victim);
    await t.waitFor((e) => e.kind === 'log' && e.node === victim && e.msg === 'member started', {
      timeoutMs: 15000,
      description: 'the follower to restart',
      includePast: true,
    });
    await t.sleep(1000);
    writing = false;
    await Promise.all(writers);

    const states = await converge(t, kv, 20000);
    t.note('members after catch-up', { states: states.map(brief) });
    t.check('writes made progress', Object.keys(acked).length >= 10, { acked: Object.keys(acked).length });
    t.check('the restarted member caught up', states.length === 3 && new Set(states.map((s) => s.appliedIndex)).size === 1, { states: states.map(brief) });
    t.check('all members hold the same data', new Set(states.map((s) => s.kvHash)).size === 1, { states: states.map(brief) });
    for (const s of states) {
      const missing = Object.entries(acked).filter(([k, v]) => s.kv?.[k] !== v).map(([k]) => k);
      t.check('every acknowledged write is on every member', missing.length === 0, { node: s.id, missing: missing.slice(0, 20), count: missing.length });
    }
  },
};
