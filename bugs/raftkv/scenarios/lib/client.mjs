// RaftKV over the shared scenario library: the leader is the member whose Status says
// so at the highest term, and reads go through the log.
import { LeaderClient, connectWith, pick, poll, running, states } from '../../../lib/scenario-lib.mjs';

const RETRYABLE = new Set(['not leader', 'leader changed', 'leader transferring', 'conf change pending', 'timeout']);

export function hex(id) {
  return Number(id).toString(16);
}

export class KvClient extends LeaderClient {
  leaderIn(statuses) {
    return statuses.filter((s) => s.ok && s.role === 'leader').sort((a, b) => b.term - a.term)[0];
  }

  /** Sends to the leader, following redirects and retrying until timeoutMs. */
  request(type, body, { timeoutMs = 10000, tryMs = 2000 } = {}) {
    return this.toLeader(type, body, { timeoutMs, tryMs, retryable: RETRYABLE });
  }

  put(key, value, extra = {}) {
    return this.request('Put', { key, value, ...extra });
  }

  get(key) {
    return this.request('Get', { key });
  }
}

export const connect = (t, name) => connectWith(KvClient, t, name);

/** Waits until every running member (or each of `nodes`) has applied the same index and reports the same kvHash. */
export async function converge(t, kv, timeoutMs = 15000, nodes = t.nodes) {
  const settled = (ss) => ss.every(Boolean) && new Set(ss.map((s) => s.appliedIndex)).size === 1 && ss[0].appliedIndex === Math.max(...ss.map((s) => s.commitIndex));
  // Reads go through the log: one carries the leader's commit index to everyone.
  const between = () => kv.request('Get', { key: '__converge' }, { timeoutMs: 2000 });
  const r = await poll(t, () => states(t, running(t, nodes)), { timeoutMs, everyMs: 200, done: settled, between });
  return r.value.filter(Boolean);
}

/** The members still serving: the running nodes whose Status does not say they were removed. */
export async function serving(t, kv) {
  const ss = await kv.statusAll(running(t));
  return ss.filter((s) => s.ok).map((s) => s.id);
}

export const brief = (s) => pick(s, ['id', 'role', 'term', 'members', 'commitIndex', 'appliedIndex', 'consistentIndex', 'lastLog', 'revision', 'kvHash', 'keyCount']);
