// restart-stream-leader — the server leading an in-memory stream restarts.
import { call, createStream, ok, publish, replica, streamLeader } from './lib/nats.mjs';

export default {
  name: 'restart-stream-leader',
  description:
    'Three servers hold a replicated in-memory stream (R3). Messages are published, the server leading the stream is ' +
    'killed, more messages are published while it is down and the leadership is handed from the new leader to the ' +
    'third server, and the killed server is restarted. Every server must then hold every acknowledged message, and ' +
    'with another server down for maintenance the two left must still accept publishes.',
  timeoutMs: 120000,
  async run(t) {
    const c = await t.client('client-ops');
    const stream = 'ORDERS';
    const created = await createStream(t, c, { name: stream, subjects: ['orders.>'], num_replicas: 3, storage: 'memory' });
    t.check('the stream is created', ok(created) || /already in use/.test(String(created.error)), { error: created.error ?? null });
    const first = await streamLeader(t, c, stream);
    t.note('stream leader', { leader: first });

    const acked = [];
    const send = async (nodes, i) => {
      const r = await publish(t, c, nodes, `orders.${i}`, `order-${i}`, `order-${i}`);
      t.check('publish is acknowledged', ok(r) && typeof r.data?.seq === 'number', { order: i, error: r.error ?? null });
      if (typeof r.data?.seq === 'number') acked.push(r.data.seq);
    };
    for (let i = 1; i <= 30; i++) await send(t.nodes, i);

    await t.kill(first);
    const rest = t.nodes.filter((n) => n !== first);
    const second = await streamLeader(t, c, stream, rest);
    t.note('stream leader while the first is down', { leader: second });
    for (let i = 31; i <= 40; i++) await send(rest, i);
    // Planned maintenance goes on meanwhile: the stream's leadership is handed to the other server.
    const third = rest.find((n) => n !== second);
    await t.until(async () => {
      await call(c, second, 'StreamLeaderStepdown', { stream }, 3000);
      const l = await streamLeader(t, c, stream, rest, 10000).catch(() => undefined);
      return l === third ? l : undefined;
    }, { timeoutMs: 30000, everyMs: 500, description: `${third} to take over the stream` });
    for (let i = 41; i <= 45; i++) await send(rest, i);
    await t.restart(first);

    const last = Math.max(...acked);
    const held = {};
    for (const n of t.nodes) {
      let r;
      try {
        await t.until(async () => {
          r = await replica(c, n, stream);
          return r !== undefined && r.last >= last && r.messages >= acked.length;
        }, { timeoutMs: 20000, everyMs: 250, description: `${n} to hold all ${acked.length} messages` });
      } catch {
        // the check below says what the server holds
      }
      held[n] = r ?? null;
      t.check('every server holds every acknowledged message', r !== undefined && r.last >= last && r.messages >= acked.length, { node: n, restarted: n === first, acknowledged: acked.length, lastSeq: last, replica: r ?? null });
    }

    // Another server goes down for maintenance: two of three are left.
    const away = second;
    await t.kill(away);
    const up = t.nodes.filter((n) => n !== away);
    const r = await publish(t, c, up, 'orders.46', 'order-46', 'order-46', 20000);
    t.check('two of three servers accept a publish', ok(r) && typeof r.data?.seq === 'number', { down: away, error: r.error ?? null });
    await t.restart(away);
    const info = await call(c, third, 'StreamInfo', { stream }, 3000);
    t.note('stream after the faults', { state: info.data?.state ?? null, cluster: info.data?.cluster ?? null, held });
  },
};
