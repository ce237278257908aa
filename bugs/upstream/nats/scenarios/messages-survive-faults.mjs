// messages-survive-faults — acknowledged messages of two replicated file streams
// through a partition of a stream leader, a leader hand-over, a server's crash and
// restart, and a server down while publishing goes on.
import { call, createStream, getMsg, ok, publish, replica, streamLeader } from './lib/nats.mjs';

const STREAMS = [
  { name: 'EVENTS', subjects: ['events.>'], num_replicas: 3, storage: 'file' },
  { name: 'ORDERS', subjects: ['orders.>'], num_replicas: 3, storage: 'file', max_msgs_per_subject: 1000 },
];
const prefix = (s) => s.subjects[0].slice(0, -2);

export default {
  name: 'messages-survive-faults',
  description:
    'Three servers hold two replicated file streams (R3) and take publishes while the ' +
    "leader of a stream is partitioned from the others and the partition heals, while a stream's leader hands over " +
    'to another server, and after a server is killed and restarted. Every publish must be acknowledged once, every ' +
    'acknowledged message must be readable with its payload, every server must come to hold every acknowledged ' +
    'message, and with one server down the other two must keep accepting publishes.',
  timeoutMs: 240000,
  async run(t) {
    const c = await t.client('client-ops');
    for (const s of STREAMS) {
      const r = await createStream(t, c, s);
      t.check('the stream is created', ok(r) || /already in use/.test(String(r.error)), { stream: s.name, error: r.error ?? null });
    }
    const acked = Object.fromEntries(STREAMS.map((s) => [s.name, new Map()]));
    let n = 0;
    const send = async (nodes, count) => {
      for (let i = 0; i < count; i++) {
        n++;
        for (const s of STREAMS) {
          const id = `${s.name.toLowerCase()}-${n}`;
          const r = await publish(t, c, nodes, `${prefix(s)}.${n % 5}`, id, id);
          t.check('publish is acknowledged', ok(r) && typeof r.data?.seq === 'number', { stream: s.name, id, error: r.error ?? null });
          if (typeof r.data?.seq === 'number') {
            const other = [...acked[s.name].entries()].find(([seq, v]) => seq === r.data.seq && v !== id);
            t.check('each sequence is acknowledged for one message', other === undefined, { stream: s.name, seq: r.data.seq, id, other: other?.[1] ?? null });
            acked[s.name].set(r.data.seq, id);
          }
        }
      }
    };
    await send(t.nodes, 15);

    // The file stream's leader is cut off; the majority elects another and takes publishes.
    const cut = await streamLeader(t, c, 'EVENTS');
    const majority = t.nodes.filter((x) => x !== cut);
    t.partition([[cut], majority]);
    await t.sleep(300);
    await send(majority, 8);
    t.heal();
    await t.sleep(500);
    t.note('partitioned', { node: cut });

    // The second stream's leader hands over to another server.
    const before = await streamLeader(t, c, 'ORDERS');
    const after = await t.until(async () => {
      await call(c, before, 'StreamLeaderStepdown', { stream: 'ORDERS' }, 5000);
      const l = await streamLeader(t, c, 'ORDERS', t.nodes, 10000).catch(() => undefined);
      return l !== undefined && l !== before ? l : undefined;
    }, { timeoutMs: 40000, everyMs: 500, description: `ORDERS' leadership to move from ${before}` });
    t.note('leader after the hand-over', { before, after });
    await send(t.nodes, 8);

    // A server crashes and comes back.
    const victim = t.nodes[Math.floor(t.random() * t.nodes.length)];
    await t.kill(victim);
    await t.sleep(300);
    await send(t.nodes.filter((x) => x !== victim), 5);
    await t.restart(victim);
    t.note('restarted', { node: victim });
    for (const s of STREAMS) await streamLeader(t, c, s.name);
    await send(t.nodes, 5);

    for (const s of STREAMS) {
      const seqs = [...acked[s.name].keys()];
      const last = Math.max(...seqs);
      for (const node of t.nodes) {
        let r;
        let tick = 0;
        try {
          await t.until(async () => {
            r = await replica(c, node, s.name);
            if (r !== undefined && r.last >= last && r.messages >= seqs.length) return true;
            // A follower learns how far the log is committed from the leader's next entries: keep some coming.
            if (++tick % 8 === 0) await publish(t, c, t.nodes, `${prefix(s)}.tick`, 'tick', `${s.name.toLowerCase()}-${node}-tick-${tick}`, 3000);
            return undefined;
          }, { timeoutMs: 25000, everyMs: 250, description: `${node} to hold ${s.name}'s ${seqs.length} messages` });
        } catch {
          // the check says what it holds
        }
        t.check('every server holds every acknowledged message', r !== undefined && r.last >= last && r.messages >= seqs.length, { stream: s.name, node, restarted: node === victim, acknowledged: seqs.length, lastSeq: last, replica: r ?? null });
      }
      const wrong = {};
      for (const [seq, id] of acked[s.name]) {
        const g = await getMsg(t, c, t.nodes, s.name, seq);
        if (!g.ok || g.payload !== id) wrong[seq] = g.ok ? g.payload : `error: ${g.error}`;
      }
      t.check('every acknowledged message is readable with its payload', Object.keys(wrong).length === 0, { stream: s.name, wrong });
    }

    // One server down for maintenance: the other two keep taking publishes.
    const away = t.nodes[Math.floor(t.random() * t.nodes.length)];
    await t.kill(away);
    const up = t.nodes.filter((x) => x !== away);
    for (const s of STREAMS) {
      const id = `${s.name.toLowerCase()}-maintenance`;
      const r = await publish(t, c, up, `${prefix(s)}.0`, id, id, 25000);
      t.check('two of three servers accept publishes', ok(r) && typeof r.data?.seq === 'number', { stream: s.name, down: away, error: r.error ?? null });
    }
    await t.restart(away);
  },
};
