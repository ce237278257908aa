// StreamQ over the shared scenario library: the leader is the member whose Status says
// LEADER at the highest term; publishes carry a Nats-Msg-Id, so a retry is stored once.
import { LeaderClient, connectWith, poll, running, states } from '../../../lib/scenario-lib.mjs';

// A publish still in flight answers its retries with a conflict until it is stored: keep retrying.
const RETRYABLE = new Set(['not leader', 'leader changed', 'timeout', 'duplicate message conflict']);

export class StreamClient extends LeaderClient {
  constructor(t, client) {
    super(t, client, { timeoutMs: 1500, status: { type: 'Status', timeoutMs: 800 } });
  }

  leaderIn(statuses) {
    return statuses.filter((s) => s.ok && s.role === 'LEADER').sort((a, b) => b.term - a.term)[0];
  }

  request(type, body, { timeoutMs = 30000, tryMs = 3000 } = {}) {
    return this.toLeader(type, body, { timeoutMs, tryMs, retryable: RETRYABLE });
  }

  publish(subject, data, msgId, opts) {
    return this.request('Publish', { subject, data, msgId }, opts);
  }

  /** Peer-removes a server through the leader; a retry that finds it already gone counts as done. */
  async removePeer(peer, timeoutMs = 30000) {
    const d = this.t.deadline(timeoutMs);
    let last = { ok: false, error: 'timeout' };
    let tried = false;
    while (!d.expired) {
      last = await this.request('PeerRemove', { peer }, { timeoutMs: 8000 });
      if (last.ok) return last;
      if (last.error === 'peer not a member' && tried) return { ok: true, removed: peer, retried: true };
      tried = true;
      await this.t.sleep(500);
    }
    return last;
  }
}

export const connect = (t, name) => connectWith(StreamClient, t, name);

/** Waits until every running member has applied the same index and holds the same stream. */
export async function converge(t, _sc, timeoutMs = 10000) {
  const same = (ss, f) => new Set(ss.map(f)).size === 1;
  const settled = (ss) => ss.every(Boolean) && same(ss, (s) => s.applied) && same(ss, (s) => s.stream.hash) && ss[0].applied === Math.max(...ss.map((s) => s.commit));
  const r = await poll(t, () => states(t, running(t)), { timeoutMs, everyMs: 150, done: settled });
  return r.value.filter(Boolean);
}

export function brief(s) {
  if (!s) return null;
  const { id, role, term, leader, commit, applied, pindex, pterm, stream } = s;
  return { id, role, term, leader, commit, applied, pindex, pterm, lastSeq: stream?.lastSeq ?? null, hash: stream?.hash ?? null };
}

/** Acknowledged msgIds missing from a member's stream. */
export function missingAcked(state, acked) {
  const have = new Set(state.msgIds ?? []);
  return acked.filter((id) => !have.has(id));
}
