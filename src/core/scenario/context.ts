import type { Cluster } from '../cluster/types';
import type { Event } from '../events/event';
import { seededRandom } from '../../runtime/random';
import { InvariantViolation, type ScenarioContext } from './scenario';

/** A `waitFor` that ran out of time: the system did not make the progress the scenario expects. */
export class ProgressTimeout extends Error {
  constructor(readonly description: string, readonly timeoutMs: number) {
    super(`no progress: ${description} (waited ${timeoutMs} ms)`);
    this.name = 'ProgressTimeout';
  }
}

/** Where a scenario's waits run: real timers live, the scheduler's virtual timers in simulation. */
export interface ScenarioClock {
  setTimer(ms: number, fn: () => void): { cancel(): void };
}

export const realClock: ScenarioClock = {
  setTimer(ms, fn) {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
};

/** ScenarioContext over a started cluster; the same for live and simulated runs but for the clock. */
export function clusterContext(cluster: Cluster, seed: number, nodes: readonly string[], clock: ScenarioClock = realClock): ScenarioContext & { dispose(): void } {
  const random = seededRandom(seed, 'scenario');
  const timers = new Set<{ cancel(): void }>();
  const unsubscribers = new Set<() => void>();
  /**
   * Set when the trial is over (passed, failed or timed out). A scenario's loops can
   * outlive it — a keep-alive loop of a trial that timed out — so from then on its waits
   * never end and set no timer: the loops stop, and nothing keeps the process alive.
   */
  let over = false;
  const never = <T>() => new Promise<T>(() => {});
  const sleep = (ms: number) =>
    over ? never<void>() : new Promise<void>((resolve) => {
      const t = clock.setTimer(ms, () => {
        timers.delete(t);
        resolve();
      });
      timers.add(t);
    });
  const harness = (kind: Event['kind'], msg: string, fields?: Record<string, unknown>, level?: Event['level']) =>
    cluster.emit({ node: 'harness', kind, msg, ...(level ? { level } : {}), ...(fields ? { fields } : {}) });

  return {
    seed,
    nodes,
    random,
    sleep,
    waitFor(pred, { timeoutMs, description, includePast }) {
      if (over) return never<Event>();
      if (includePast) {
        const hit = cluster.events().find(pred);
        if (hit) return Promise.resolve(hit);
      }
      return new Promise<Event>((resolve, reject) => {
        const unsubscribe = cluster.onEvent((e) => {
          if (!pred(e)) return;
          finish();
          resolve(e);
        });
        const timer = clock.setTimer(timeoutMs, () => {
          finish();
          harness('check', `progress: ${description}`, { ok: false, timeoutMs }, 'error');
          reject(new ProgressTimeout(description, timeoutMs));
        });
        timers.add(timer);
        unsubscribers.add(unsubscribe);
        function finish() {
          timer.cancel();
          timers.delete(timer);
          unsubscribe();
          unsubscribers.delete(unsubscribe);
        }
      });
    },
    events: () => cluster.events(),
    nodeInfo: () => cluster.nodes(),
    state: (node) => cluster.state(node),
    client: (name) => cluster.client(name),
    kill: (node) => cluster.kill(node),
    restart: (node) => cluster.restart(node),
    pause: (node) => cluster.pause(node),
    resume: (node) => cluster.resume(node),
    partition: (groups) => cluster.partition(groups),
    heal: () => cluster.heal(),
    addLinkFault: (f) => cluster.addLinkFault(f),
    clearLinkFaults: () => cluster.clearLinkFaults(),
    skewClock: (node, ms) => cluster.skewClock(node, ms),
    note: (msg, fields) => void harness('log', msg, fields, 'info'),
    check(name, ok, details = {}) {
      harness('check', name, { ok, ...details }, ok ? 'info' : 'error');
      if (!ok) throw new InvariantViolation(name, details);
    },
    dispose() {
      over = true;
      for (const t of timers) t.cancel();
      for (const u of unsubscribers) u();
      timers.clear();
      unsubscribers.clear();
    },
  };
}
