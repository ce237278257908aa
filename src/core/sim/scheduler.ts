import { EventQueue, QueueEntry } from './queue';

/** Why a run of the scheduler ended. */
export type RunEnd = 'done' | 'deadline' | 'idle' | 'step-limit' | 'stopped';

export interface Cancellable {
  cancel(): void;
}

/**
 * Lets every pending promise continuation (the harness's, the scenario's) run before the next task.
 * Node runs next-tick callbacks only once the microtask queue is empty, so a tick sees every chain of
 * continuations settle, as a turn of the event loop would, at a fraction of its cost (a seed wakes
 * dozens of times).
 */
const drainMicrotasks = (): Promise<void> => new Promise((resolve) => process.nextTick(resolve));

/**
 * Virtual time and the one queue of everything that will happen. Tasks run
 * synchronously in (time, seq) order; the harness's async code (scenario
 * continuations) runs only when a task asked for it with `wake()` — a reply
 * reached a client, a sleep ended, a wait matched — so seeds stay fast and every
 * continuation runs at the virtual instant that resolved it.
 */
export class Scheduler {
  private readonly queue = new EventQueue();
  private seq = 0;
  private time = 0;
  private taskCount = 0;
  private wakeRequested = false;
  private stopped = false;

  constructor(private readonly maxSteps: number) {}

  /** Virtual microseconds since the run started. */
  now(): number {
    return this.time;
  }

  /** Tasks run so far. */
  get steps(): number {
    return this.taskCount;
  }

  /** Schedules `run` at virtual time `time` (never before now). After stop() nothing is scheduled. */
  at(time: number, run: () => void): Cancellable {
    const entry = new QueueEntry(Math.max(time, this.time), this.seq++, this.stopped, run);
    if (!this.stopped) this.queue.push(entry);
    return entry;
  }

  after(delayUs: number, run: () => void): Cancellable {
    return this.at(this.time + delayUs, run);
  }

  /** Asks the run loop to let harness continuations run before the next task. */
  wake(): void {
    this.wakeRequested = true;
  }

  /** Drops everything pending; later scheduling is ignored, so stale harness code cannot revive the run. */
  stop(): void {
    this.stopped = true;
    this.queue.clear();
  }

  /** Runs tasks until `done()` holds, virtual time would pass `deadline`, or nothing is left to run. */
  async runUntil(done: () => boolean, deadline = Infinity): Promise<RunEnd> {
    // Harness code that ran since the last run (a scenario just started) goes first.
    this.wakeRequested = true;
    for (;;) {
      if (this.wakeRequested) {
        this.wakeRequested = false;
        await drainMicrotasks();
        continue;
      }
      if (done()) return 'done';
      if (this.stopped) return 'stopped';
      const next = this.queue.peek();
      if (next === undefined) return 'idle';
      if (next.time > deadline) {
        this.time = deadline;
        return 'deadline';
      }
      if (this.taskCount >= this.maxSteps) return 'step-limit';
      this.taskCount++;
      this.queue.pop();
      this.time = next.time;
      next.run();
    }
  }
}
