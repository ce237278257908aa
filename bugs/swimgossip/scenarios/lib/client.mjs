// Client helpers shared by the SwimGossip scenarios: Status from each member,
// and waiting until members agree on who is in which state.

/** Resolves `expired` after ms, on the scenario's clock (real or simulated). */
export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

export class SwimClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
  }

  async send(node, type, body, timeoutMs = 2000) {
    try {
      return await this.c.request(node, type, body, timeoutMs);
    } catch (e) {
      return { ok: false, error: 'client timeout', detail: String(e?.message ?? e) };
    }
  }

  status(node) {
    return this.send(node, 'Status', {}, 1000);
  }

  /** What `node` thinks of `member`: alive, suspect, dead, left, or absent. */
  static view(status, member) {
    return status?.members?.find((m) => m.name === member)?.state ?? 'absent';
  }

  /**
   * Waits until, for every observer, pred(status) holds. Returns the last statuses and
   * whether the wait succeeded.
   */
  async waitUntil(observers, pred, timeoutMs) {
    const d = deadline(this.t, timeoutMs);
    let statuses = [];
    for (;;) {
      statuses = await Promise.all(observers.map((n) => this.status(n)));
      if (statuses.every((s) => s.ok && pred(s))) return { ok: true, statuses };
      if (d.expired) return { ok: false, statuses };
      await this.t.sleep(100);
    }
  }

  /** Waits until every observer sees exactly `alive` as its alive members. */
  waitAlive(observers, alive, timeoutMs = 10000) {
    const want = [...alive].sort().join(',');
    return this.waitUntil(observers, (s) => s.alive.join(',') === want, timeoutMs);
  }
}

export async function connect(t, name) {
  return new SwimClient(t, await t.client(name));
}

export function brief(s) {
  if (!s) return null;
  return { id: s.id, incarnation: s.incarnation, members: (s.members ?? []).map((m) => `${m.name}:${m.state}@${m.incarnation}`).join(' ') };
}
