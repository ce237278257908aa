import type { Cluster } from '../cluster/types';
import type { Event } from '../events/event';
import { seededRandom } from '../../runtime/random';
import { InvariantViolation, type Deadline, type ScenarioContext, type Truthy } from './scenario';

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

/** What the trial runner holds beyond the scenario's context. */
export interface TrialContext extends ScenarioContext {
  /** The scenario's run, rejecting as soon as a `background` task fails. */
  supervise(work: Promise<void>): Promise<void>;
  /** Ends the trial: every pending wait is dropped and later ones never end. */
  dispose(): void;
}

/** ScenarioContext over a started cluster; the same for live and simulated runs but for the clock. */
export function clusterContext(cluster: Cluster, seed: number, nodes: readonly string[], clock: ScenarioClock = realClock): TrialContext {
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
  const progressTimeout = (description: string, timeoutMs: number) => {
    harness('check', `progress: ${description}`, { ok: false, timeoutMs }, 'error');
    return new ProgressTimeout(description, timeoutMs);
  };
  // It expires as a sleep resolves, as the scenarios' own deadlines did, so their simulated schedules stay the same.
  const deadline = (ms: number): Deadline => {
    const d = { expired: false };
    void sleep(ms).then(() => {
      d.expired = true;
    });
    return d;
  };
  async function until<T>(cond: () => T | Promise<T>, { timeoutMs, everyMs = 100, description }: { timeoutMs: number; everyMs?: number; description: string }): Promise<Truthy<Awaited<T>>> {
    const d = deadline(timeoutMs);
    for (;;) {
      const value = await cond();
      if (value) return value as Truthy<Awaited<T>>;
      if (d.expired) throw progressTimeout(description, timeoutMs);
      await sleep(everyMs);
    }
  }
  let backgroundFailed: (err: unknown) => void = () => {};
  const backgroundFailure = new Promise<never>((_, reject) => (backgroundFailed = reject));
  backgroundFailure.catch(() => {});
  function background<T>(fn: () => Promise<T>): Promise<T> {
    let work: Promise<T>;
    try {
      work = fn();
    } catch (err) {
      work = Promise.reject(err);
    }
    work.catch((err: unknown) => {
      if (!over) backgroundFailed(err);
    });
    return work;
  }

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
          reject(progressTimeout(description, timeoutMs));
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
    deadline,
    until,
    background,
    supervise: (work) => Promise.race([work, backgroundFailure]),
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
