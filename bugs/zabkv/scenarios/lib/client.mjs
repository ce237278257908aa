// ZabKV over the shared scenario library: the leader is the serving LEADING server at
// the highest epoch; writes retry on connection loss, and reads from a chosen server
// follow a Sync (like a ZooKeeper client calling sync() before getData()).
import { LeaderClient, connectWith, pick, poll, retry, running, states } from '../../../lib/scenario-lib.mjs';

const RETRYABLE = new Set(['not serving', 'connection loss', 'timeout']);

export class ZkClient extends LeaderClient {
  constructor(t, client) {
    super(t, client, { timeoutMs: 1500, leaderPollMs: 50 });
  }

  leaderIn(statuses) {
    return statuses.filter((s) => s.ok && s.state === 'LEADING' && s.serving).sort((a, b) => b.currentEpoch - a.currentEpoch)[0];
  }

  /** Waits until every given server is serving; returns their statuses (or null on timeout). */
  async waitServing(nodes, timeoutMs = 10000) {
    const r = await poll(this.t, () => this.statusAll(nodes), { timeoutMs, everyMs: 50, done: (s) => s.every((x) => x.ok && x.serving) });
    return r.ok ? r.value : null;
  }

  /** A write sent to `node` (default: the leader), retried on connection loss until timeoutMs. */
  write(type, body, { node = null, timeoutMs = 15000, tryMs = 1500 } = {}) {
    let attempts = 0;
    const attempt = async () => {
      const target = node ?? this.leader ?? (await this.findLeader(1000))?.id;
      if (!target) return undefined;
      const r = await this.send(target, type, body, tryMs);
      attempts++;
      // A create retried after a lost answer may find its own node.
      if (!r.ok && r.error === 'NODEEXISTS' && attempts > 1) return { done: { ok: true, retried: true } };
      if (r.ok || !RETRYABLE.has(r.error)) return { done: r };
      if (!node) this.leader = null;
      return { again: r };
    };
    return retry(this.t, attempt, { timeoutMs, none: { ok: false, error: 'no leader' } });
  }

  create(path, data, opts) {
    return this.write('Create', { path, data }, opts);
  }

  setData(path, data, version = -1, opts) {
    return this.write('SetData', { path, data, version }, opts);
  }

  /** Opens a session through `opts.node` (default: the leader); the reply's `session` is its id. */
  openSession(opts) {
    return this.write('CreateSession', {}, opts);
  }

  closeSession(session, opts) {
    return this.write('CloseSession', { session }, opts);
  }

  /** Creates a znode owned by `session`: it goes when the session is closed. */
  createEphemeral(path, data, session, opts) {
    return this.write('Create', { path, data, ephemeral: true, session }, opts);
  }

  /** Sync then GetData on one server, retried while that server is not serving (up to timeoutMs). */
  async read(node, path, timeoutMs = 15000) {
    const syncThenGet = async () => {
      const s = await this.send(node, 'Sync', { path });
      return s.ok ? this.send(node, 'GetData', { path }) : s;
    };
    return (await poll(this.t, syncThenGet, { timeoutMs, done: (r) => r.ok || !RETRYABLE.has(r.error) })).value;
  }
}

export const connect = (t, name) => connectWith(ZkClient, t, name);

/** Waits until every running server is serving with the same last zxid and digest. */
export async function converge(t, _zk, timeoutMs = 10000) {
  const settled = (ss) => ss.every((s) => s && s.serving && s.outstanding === 0) && new Set(ss.map((s) => s.lastZxid)).size === 1;
  const r = await poll(t, () => states(t, running(t)), { timeoutMs, done: settled });
  return r.value.filter(Boolean);
}

export const brief = (s) =>
  pick(s, ['id', 'state', 'serving', 'leader', 'currentEpoch', 'acceptedEpoch', 'lastZxid', 'lastLoggedZxid', 'snapshotZxid', 'digest', 'znodeCount', 'sessions', 'ephemerals']);
