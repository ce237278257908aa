// Client helpers shared by the RMSched scenarios: a failover proxy over the
// two RMs (like ConfiguredRMFailoverProxyProvider) and application polling.

/** Resolves `expired` after ms, on the scenario's clock (real or simulated). */
export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

export const RMS = ['rm1', 'rm2'];

export class YarnClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
    this.index = 0;
  }

  /** A raw request to one node; a timeout becomes { ok: false, error: 'timeout' }. */
  async send(node, type, body = {}, timeoutMs = 3000) {
    try {
      return await this.c.request(node, type, body, timeoutMs);
    } catch (e) {
      return { ok: false, error: 'timeout', detail: String(e?.message ?? e) };
    }
  }

  /** Sends to the RMs in turn until one that is active answers, or timeoutMs passes. */
  async call(type, body = {}, timeoutMs = 8000) {
    const d = deadline(this.t, timeoutMs);
    let last = { ok: false, error: 'no active RM' };
    while (!d.expired) {
      const r = await this.send(RMS[this.index], type, body);
      if (r.ok || (r.error !== 'standby' && r.error !== 'timeout')) return r;
      last = r;
      this.index = (this.index + 1) % RMS.length;
      await this.t.sleep(50);
    }
    return last;
  }

  async haStates() {
    const live = new Set(this.t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id));
    const out = {};
    for (const rm of RMS) out[rm] = live.has(rm) ? ((await this.send(rm, 'GetServiceState', {}, 1500)).haState ?? 'unreachable') : 'down';
    return out;
  }

  /** Waits until exactly one RM reports ACTIVE; returns its id or null. */
  async waitForActive(timeoutMs = 10000) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const states = await this.haStates();
      const active = RMS.filter((rm) => states[rm] === 'ACTIVE');
      if (active.length === 1) return active[0];
      if (d.expired) return null;
      await this.t.sleep(100);
    }
  }

  async submit(appId, durationMs = 600, maxAttempts = 2) {
    return this.call('SubmitApplication', { appId, durationMs, maxAttempts });
  }

  /** Polls the application until it reaches a final state or timeoutMs passes; returns its last report. */
  async waitForFinal(appId, timeoutMs = 10000) {
    const d = deadline(this.t, timeoutMs);
    let last = null;
    for (;;) {
      const r = await this.call('GetApplicationReport', { appId }, 2000);
      if (r.ok) last = r.app;
      if (last && ['FINISHED', 'FAILED', 'KILLED'].includes(last.state)) return last;
      if (d.expired) return last;
      await this.t.sleep(100);
    }
  }

  async nodes() {
    const r = await this.call('GetClusterNodes', {}, 3000);
    return r.ok ? Object.fromEntries(r.nodes.map((n) => [n.nodeId, n.state])) : {};
  }

  /** Waits until both NodeManagers are registered RUNNING with the active RM. */
  async waitForNodes(ids = ['nm1', 'nm2'], timeoutMs = 10000) {
    const d = deadline(this.t, timeoutMs);
    for (;;) {
      const nodes = await this.nodes();
      if (ids.every((id) => nodes[id] === 'RUNNING')) return nodes;
      if (d.expired) return nodes;
      await this.t.sleep(100);
    }
  }
}

export async function connect(t, name) {
  return new YarnClient(t, await t.client(name));
}
