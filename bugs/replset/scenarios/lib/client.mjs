// ReplSet over the shared scenario library: the primary is the member whose isMaster
// says so at the highest term; writes follow NotWritablePrimary answers, reads go to a
// chosen member with a read concern.
import { LeaderClient, connectWith, pick, poll, running, states } from '../../../lib/scenario-lib.mjs';

const RETRYABLE = new Set(['timeout', 'NotWritablePrimary']);

export class MongoClient extends LeaderClient {
  constructor(t, client) {
    super(t, client, { status: { type: 'isMaster', timeoutMs: 500 } });
  }

  leaderIn(statuses) {
    return statuses.filter((r) => r.ok && r.ismaster).sort((a, b) => b.term - a.term)[0];
  }

  idOf(status) {
    return status.me;
  }

  /** The member that reports itself primary at the highest term, or null. */
  findPrimary(timeoutMs, among) {
    return this.findLeader(timeoutMs, among);
  }

  /** insert through the primary, following NotWritablePrimary until timeoutMs. */
  insert(_id, v, writeConcern = { w: 'majority' }, { timeoutMs = 8000 } = {}) {
    const tryMs = (writeConcern.wtimeout ?? 5000) + 1000;
    return this.toLeader('insert', { _id, v, writeConcern }, { timeoutMs, tryMs, retryable: RETRYABLE, redirect: (r) => r.primary, none: { ok: false, error: 'no primary' } });
  }

  find(node, _id, readConcern = 'local', timeoutMs = 1000) {
    return this.send(node, 'find', { _id, readConcern }, timeoutMs);
  }
}

export const connect = (t, name) => connectWith(MongoClient, t, name);

const opTime = (o) => `${o.t}:${o.ts}`;

/** Waits until every running member reports the same last applied optime and commit point. */
export async function converge(t, timeoutMs = 8000) {
  let live = [];
  const probe = () => states(t, (live = running(t))).then((ss) => ss.filter(Boolean));
  const settled = (ss) => {
    if (ss.length !== live.length || new Set(ss.map((s) => opTime(s.lastApplied))).size !== 1 || !ss.some((s) => s.state === 'PRIMARY')) return false;
    const cp = new Set(ss.map((s) => opTime(s.lastCommittedOpTime)));
    return cp.size === 1 && opTime(ss[0].lastApplied) === [...cp][0];
  };
  const r = await poll(t, probe, { timeoutMs, done: settled });
  return { ok: r.ok, states: r.value };
}

export const brief = (s) => pick(s, ['id', 'state', 'term', 'primary', 'lastApplied', 'lastCommittedOpTime', 'oplogLength', 'syncSource', 'rbid', 'docCount']);
