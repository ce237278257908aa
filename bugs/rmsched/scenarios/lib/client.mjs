// RMSched over the shared scenario library: a failover proxy over the two RMs (like
// ConfiguredRMFailoverProxyProvider) and application polling.
import { ScenarioClient, connectWith, poll, retry } from '../../../lib/scenario-lib.mjs';

export const RMS = ['rm1', 'rm2'];

export class YarnClient extends ScenarioClient {
  constructor(t, client) {
    super(t, client, { timeoutMs: 3000 });
    this.index = 0;
  }

  /** Sends to the RMs in turn until one that is active answers, or timeoutMs passes. */
  call(type, body = {}, timeoutMs = 8000) {
    const attempt = async () => {
      const r = await this.send(RMS[this.index], type, body);
      if (r.ok || (r.error !== 'standby' && r.error !== 'timeout')) return { done: r };
      this.index = (this.index + 1) % RMS.length;
      return { again: r };
    };
    return retry(this.t, attempt, { timeoutMs, none: { ok: false, error: 'no active RM' } });
  }

  async haStates() {
    const live = new Set(this.running(RMS));
    const out = {};
    for (const rm of RMS) out[rm] = live.has(rm) ? ((await this.send(rm, 'GetServiceState', {}, 1500)).haState ?? 'unreachable') : 'down';
    return out;
  }

  /** Waits until exactly one RM reports ACTIVE; returns its id or null. */
  async waitForActive(timeoutMs = 10000) {
    const active = async () => {
      const states = await this.haStates();
      const ids = RMS.filter((rm) => states[rm] === 'ACTIVE');
      return ids.length === 1 ? ids[0] : null;
    };
    return (await poll(this.t, active, { timeoutMs })).value;
  }

  async submit(appId, durationMs = 600, maxAttempts = 2) {
    return this.call('SubmitApplication', { appId, durationMs, maxAttempts });
  }

  /** Polls the application until it reaches a final state or timeoutMs passes; returns its last report. */
  async waitForFinal(appId, timeoutMs = 10000) {
    let last = null;
    const report = async () => {
      const r = await this.call('GetApplicationReport', { appId }, 2000);
      if (r.ok) last = r.app;
      return last;
    };
    return (await poll(this.t, report, { timeoutMs, done: (app) => app && ['FINISHED', 'FAILED', 'KILLED'].includes(app.state) })).value;
  }

  async nodes() {
    const r = await this.call('GetClusterNodes', {}, 3000);
    return r.ok ? Object.fromEntries(r.nodes.map((n) => [n.nodeId, n.state])) : {};
  }

  /** Waits until both NodeManagers are registered RUNNING with the active RM. */
  async waitForNodes(ids = ['nm1', 'nm2'], timeoutMs = 10000) {
    return (await poll(this.t, () => this.nodes(), { timeoutMs, done: (nodes) => ids.every((id) => nodes[id] === 'RUNNING') })).value;
  }
}

export const connect = (t, name) => connectWith(YarnClient, t, name);
