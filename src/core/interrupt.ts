/**
 * Ctrl-C and SIGTERM as a cancellation: the first one aborts the run's AbortSignal, so
 * trials stop, scratch copies are removed and the summary is printed; a second one exits
 * at once (the process registry's 'exit' hook still kills every node group first).
 */

export const INTERRUPT_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
export type InterruptSignal = (typeof INTERRUPT_SIGNALS)[number];

/** 128 + the signal's number, as a shell reports a process that a signal ended. */
export const SIGNAL_EXIT_CODE: Readonly<Record<InterruptSignal, number>> = { SIGINT: 130, SIGTERM: 143 };

/** The reason of a signal aborted by an interrupt, so a run can tell "the user interrupted" from other stops. */
export class Interrupted extends Error {
  constructor(readonly by: InterruptSignal) {
    super(`interrupted by ${by}`);
    this.name = 'Interrupted';
  }
}

/** Whether `signal` was aborted by an interrupt (not by a stop button or a time limit). */
export function wasInterrupted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && signal.reason instanceof Interrupted;
}

let installed = 0;

/** Whether a cancellation handles SIGINT and SIGTERM now (the process registry then leaves the signal to it). */
export function cancellationInstalled(): boolean {
  return installed > 0;
}

export interface Cancellation {
  readonly signal: AbortSignal;
  /** The signal that cancelled the run, if one came. */
  received(): InterruptSignal | undefined;
  /** Restores the default actions. */
  dispose(): void;
}

/** Listens for SIGINT and SIGTERM until disposed. */
export function cancelOnSignals(onFirst?: (by: InterruptSignal) => void): Cancellation {
  const controller = new AbortController();
  installed++;
  let first: InterruptSignal | undefined;
  const handlers = INTERRUPT_SIGNALS.map((sig) => {
    const handler = (): void => {
      if (first !== undefined) process.exit(SIGNAL_EXIT_CODE[sig]);
      first = sig;
      onFirst?.(sig);
      controller.abort(new Interrupted(sig));
    };
    process.on(sig, handler);
    return [sig, handler] as const;
  });
  return {
    signal: controller.signal,
    received: () => first,
    dispose: () => {
      if (handlers.length === 0) return;
      for (const [sig, handler] of handlers.splice(0)) process.off(sig, handler);
      installed--;
    },
  };
}
