// What the scenarios of every system need of a client and of the cluster: requests
// that never throw, the nodes that run, their states, polls that give up at a
// deadline, and requests retried (following redirects) until they are answered.
// Each system's scenarios/lib/client.mjs adds its protocol's requests on top.
// This folder holds no system.json, so the catalogue does not take it for a system.

/** The running nodes among `nodes`, in their order. */
export function running(t, nodes = t.nodes) {
  const live = new Set(t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id));
  return nodes.filter((n) => live.has(n));
}

/** The state of each of `nodes` (the running ones by default), null where one does not answer. */
export function states(t, nodes = running(t)) {
  return Promise.all(nodes.map((n) => t.state(n).catch(() => null)));
}

/**
 * Calls `probe` until `done(value)` holds, every `everyMs` (after `between`, if given),
 * and gives up once `timeoutMs` have passed. Returns { ok, value } with the last value:
 * for waits whose outcome the scenario checks with its own evidence. A wait that must
 * succeed for the scenario to go on is `t.until`.
 */
export async function poll(t, probe, { timeoutMs, everyMs = 100, done = Boolean, between = null }) {
  const d = t.deadline(timeoutMs);
  for (;;) {
    const value = await probe();
    if (done(value)) return { ok: true, value };
    if (d.expired) return { ok: false, value };
    if (between) await between();
    await t.sleep(everyMs);
  }
}

/**
 * Calls `attempt` until it gives a final answer or `timeoutMs` have passed, and returns
 * that answer or the last other one (`none` if there was none). `attempt` returns
 * { done: reply } for a final answer; { again: reply } (reply optional) to try again
 * after `everyMs`, or after `waitMs` when given (0: at once); undefined to try again at
 * once (it found nowhere to send and has waited already).
 */
export async function retry(t, attempt, { timeoutMs, everyMs = 50, none }) {
  const d = t.deadline(timeoutMs);
  let last = none;
  while (!d.expired) {
    const a = await attempt();
    if (!a) continue;
    if ('done' in a) return a.done;
    if (a.again !== undefined) last = a.again;
    const waitMs = a.waitMs ?? everyMs;
    if (waitMs > 0) await t.sleep(waitMs);
  }
  return last;
}

/** The named fields of a node's state, for a check's details. */
export function pick(s, keys) {
  return s ? Object.fromEntries(keys.map((k) => [k, s[k]])) : null;
}

/** One client of the cluster (a ClusterClient from `t.client`) for a system's requests. */
export class ScenarioClient {
  /**
   * `timeoutMs`: a request's default timeout; `timeoutError`: the error a request that
   * timed out answers with; `skipDown`: answer { ok: false, error: 'down' } for a node
   * that does not run, without sending.
   */
  constructor(t, client, { timeoutMs = 2000, timeoutError = 'timeout', skipDown = false } = {}) {
    this.t = t;
    this.c = client;
    this.name = client.name;
    this.timeoutMs = timeoutMs;
    this.timeoutError = timeoutError;
    this.skipDown = skipDown;
  }

  running(nodes = this.t.nodes) {
    return running(this.t, nodes);
  }

  /** A raw request to one node; a timeout becomes { ok: false, error: timeoutError }. */
  async send(node, type, body = {}, timeoutMs = this.timeoutMs) {
    if (this.skipDown && !this.running([node]).length) return { ok: false, error: 'down' };
    try {
      return await this.c.request(node, type, body, timeoutMs);
    } catch (e) {
      return { ok: false, error: this.timeoutError, detail: String(e?.message ?? e) };
    }
  }

  /** One request to each of `nodes`, at once; { ok: false, id, error: 'down' } for a node that does not run. */
  statusAll(nodes = this.t.nodes, { type = 'Status', timeoutMs = 1000 } = {}) {
    const live = new Set(this.running(nodes));
    return Promise.all(nodes.map(async (n) => (live.has(n) ? this.send(n, type, {}, timeoutMs) : { ok: false, id: n, error: 'down' })));
  }
}

/**
 * A client of a system with one leader that takes the requests. A subclass says how a
 * status shows the leader (`leaderIn`), and which errors mean "try again, elsewhere".
 */
export class LeaderClient extends ScenarioClient {
  /** `status`: the request, and its timeout, that shows whether a node leads; `leaderPollMs`: how often findLeader asks. */
  constructor(t, client, { status = { type: 'Status', timeoutMs: 1000 }, leaderPollMs = 100, ...opts } = {}) {
    super(t, client, opts);
    this.status = status;
    this.leaderPollMs = leaderPollMs;
    this.leader = null;
  }

  /** The leading node's status among `statuses`, or undefined; its id is `idOf(status)`. */
  leaderIn(_statuses) {
    throw new Error(`${this.constructor.name} does not say how a status shows the leader`);
  }

  idOf(status) {
    return status.id;
  }

  /** The leader's status (and this.leader set to it), or null if none shows up within timeoutMs. */
  async findLeader(timeoutMs = 10000, among = this.t.nodes) {
    const found = await poll(this.t, async () => this.leaderIn(await this.statusAll(among, this.status)), { timeoutMs, everyMs: this.leaderPollMs });
    if (!found.ok) return null;
    this.leader = this.idOf(found.value);
    return found.value;
  }

  /**
   * Sends to the leader (finding it first), following an answer's redirect (`redirect(reply)`)
   * or else looking for the leader again, while the answer's error is `retryable`, until timeoutMs.
   */
  toLeader(type, body, { timeoutMs, tryMs, retryable, redirect = (r) => r.leader, none = { ok: false, error: 'no leader' } }) {
    return retry(
      this.t,
      async () => {
        if (!this.leader) {
          await this.findLeader(1000);
          if (!this.leader) return undefined;
        }
        const target = this.leader;
        const r = await this.send(target, type, body, tryMs);
        if (r.ok || !retryable.has(r.error)) return { done: r };
        const next = redirect(r);
        this.leader = next && next !== target ? next : null;
        return { again: r };
      },
      { timeoutMs, none },
    );
  }
}

/** `new Client(t, await t.client(name))`, for a system's `connect`. */
export async function connectWith(Client, t, name) {
  return new Client(t, await t.client(name));
}
