// SwimGossip over the shared scenario library: Status from each member, and waiting
// until members agree on who is in which state.
import { ScenarioClient, connectWith, poll } from '../../../lib/scenario-lib.mjs';

export class SwimClient extends ScenarioClient {
  constructor(t, client) {
    super(t, client, { timeoutError: 'client timeout' });
  }

  status(node) {
    return this.send(node, 'Status', {}, 1000);
  }

  /** What `node` thinks of `member`: alive, suspect, dead, left, or absent. */
  static view(status, member) {
    return status?.members?.find((m) => m.name === member)?.state ?? 'absent';
  }

  /** The address `status`'s member records for `member`, or null. */
  static addrOf(status, member) {
    return status?.members?.find((m) => m.name === member)?.addr ?? null;
  }

  /**
   * Waits until, for every observer, pred(status) holds. Returns the last statuses and
   * whether the wait succeeded.
   */
  async waitUntil(observers, pred, timeoutMs) {
    const r = await poll(this.t, () => Promise.all(observers.map((n) => this.status(n))), { timeoutMs, done: (statuses) => statuses.every((s) => s.ok && pred(s)) });
    return { ok: r.ok, statuses: r.value };
  }

  /** Waits until every observer sees exactly `alive` as its alive members. */
  waitAlive(observers, alive, timeoutMs = 10000) {
    const want = [...alive].sort().join(',');
    return this.waitUntil(observers, (s) => s.alive.join(',') === want, timeoutMs);
  }
}

export const connect = (t, name) => connectWith(SwimClient, t, name);

export function brief(s) {
  if (!s) return null;
  return { id: s.id, incarnation: s.incarnation, addr: s.addr ?? null, members: (s.members ?? []).map((m) => `${m.name}:${m.state}@${m.incarnation}(${m.addr ?? '?'})`).join(' ') };
}
