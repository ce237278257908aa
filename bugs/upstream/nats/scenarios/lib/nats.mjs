// What the NATS scenarios need of JetStream's API: requests that never throw, stream
// leaders, publishes retried (with a message id, so a retry is not stored twice) until
// a stream acknowledges them, and each server's own replica of a stream.

/** A NATS request that never throws: { status, data, error }; status 0 when nothing answered. */
export async function call(c, node, type, body = {}, timeoutMs = 3000) {
  try {
    const r = await c.request(node, type, body, timeoutMs);
    const data = r?.data ?? r?.body;
    const error = data?.error ? `${data.error.description ?? 'error'} (${data.error.err_code ?? data.error.code ?? '?'})` : r?.status && r.status !== 200 ? `status ${r.status}${r.description ? ` ${r.description}` : ''}` : undefined;
    return { status: r?.status ?? 0, data, ...(error !== undefined && { error }) };
  } catch (err) {
    return { status: 0, data: undefined, error: String(err?.message ?? err) };
  }
}

export const ok = (r) => r.status === 200 && r.error === undefined;

/** Creates a stream, retried until JetStream answers (its meta leader is elected a moment after the servers start). */
export async function createStream(t, c, config, timeoutMs = 30000) {
  let last;
  await t.until(async () => {
    last = await call(c, t.nodes[0], 'StreamCreate', { stream: config.name, payload: config }, 5000);
    return ok(last) || /already in use/.test(String(last.error));
  }, { timeoutMs, everyMs: 300, description: `stream ${config.name} to be created` });
  return last;
}

/** The stream's leader as `nodes` see it (they agree, and it is one of them). */
export async function streamLeader(t, c, stream, nodes = t.nodes, timeoutMs = 30000) {
  return t.until(async () => {
    const seen = await Promise.all(nodes.map(async (n) => {
      const r = await call(c, n, 'StreamInfo', { stream }, 2000);
      return ok(r) ? r.data?.cluster?.leader : undefined;
    }));
    const l = seen[0];
    return l !== undefined && nodes.includes(l) && seen.every((s) => s === l) ? l : undefined;
  }, { timeoutMs, everyMs: 250, description: `${nodes.join(', ')} to agree on a leader of ${stream}` });
}

/** Publishes one message with id `id`, retried on `nodes` in turn until the stream acknowledges it: the ack ({ stream, seq }) or the last failure. */
export async function publish(t, c, nodes, subject, payload, id, timeoutMs = 20000) {
  const d = t.deadline(timeoutMs);
  let last;
  for (let i = 0; ; i++) {
    last = await call(c, nodes[i % nodes.length], 'Publish', { subject, payload, headers: { 'Nats-Msg-Id': id } }, 2000);
    if ((ok(last) && typeof last.data?.seq === 'number') || d.expired) return last;
    await t.sleep(150);
  }
}

/** A server's own replica of a stream, from its monitoring port: { messages, first, last } or undefined. */
export async function replica(c, node, stream) {
  const r = await call(c, node, 'Jsz', {}, 2000);
  if (r.status !== 200) return undefined;
  for (const acc of r.data?.account_details ?? []) {
    for (const s of acc.stream_detail ?? []) {
      if (s.name === stream) return { messages: s.state?.messages ?? 0, first: s.state?.first_seq ?? 0, last: s.state?.last_seq ?? 0 };
    }
  }
  return undefined;
}

/**
 * Reads one message by sequence from the stream's leader, asking `nodes` in turn until one
 * answers (JetStream is briefly unavailable while a leader is elected): its payload (text),
 * or the last error. "no message found" is an answer, not retried.
 */
export async function getMsg(t, c, nodes, stream, seq, timeoutMs = 15000) {
  const d = t.deadline(timeoutMs);
  let r;
  for (let i = 0; ; i++) {
    r = await call(c, nodes[i % nodes.length], 'MsgGet', { stream, payload: { seq } }, 3000);
    if (ok(r)) return { ok: true, payload: Buffer.from(String(r.data?.message?.data ?? ''), 'base64').toString(), subject: r.data?.message?.subject };
    if (/no message found/.test(String(r.error)) || d.expired) return { ok: false, error: r.error };
    await t.sleep(200);
  }
}
