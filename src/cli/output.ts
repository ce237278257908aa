import { UserError } from '../core/errors';
import { cancelOnSignals, Interrupted, SIGNAL_EXIT_CODE, type Cancellation } from '../core/interrupt';
import { TrialAborted } from '../core/scenario/verdict';
import { redact } from '../core/secrets';

/** Machine output: one JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(redact(JSON.stringify(value, null, 2)) + '\n');
}

/** Human output goes to stdout; progress goes to stderr so `--json` stdout stays clean. */
export function say(line = ''): void {
  process.stdout.write(redact(line) + '\n');
}

export function progress(line: string): void {
  process.stderr.write(redact(line) + '\n');
}

/**
 * Exit codes: 0 success; 1 the check failed (a trial failed, a fix is not verified, a bug
 * is not valid); 2 bad input or an error the user can fix (the message says what); 70
 * an internal error, a defect of ddbench (EX_SOFTWARE of sysexits.h), so scripts can
 * tell "fix your input" from "report a bug"; 130 and 143 interrupted by SIGINT (Ctrl-C) or SIGTERM.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, internal: 70, sigint: SIGNAL_EXIT_CODE.SIGINT, sigterm: SIGNAL_EXIT_CODE.SIGTERM } as const;

/** The epilogue of `ddbench --help`. */
export const EXIT_HELP = `
Exit codes:
  ${EXIT.ok}   success
  ${EXIT.failed}   the check failed (a trial or seed failed, a fix is not verified, a bug is not valid)
  ${EXIT.usage}   bad input or an error you can fix (the message says what and how)
  ${EXIT.internal}  an internal error of ddbench (a defect: the message has its stack)
  ${EXIT.sigint} interrupted by Ctrl-C (SIGINT): the run stopped, cleaned up and printed what it had
  ${EXIT.sigterm} interrupted by SIGTERM, the same way`;

/** Runs a command body, turning errors into a message and exit code instead of a stack trace. */
export async function runCommand(body: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await body();
  } catch (err) {
    if (err instanceof UserError) {
      process.stderr.write(redact(`ddbench: ${err.message}`) + '\n');
      process.exitCode = EXIT.usage;
    } else {
      process.stderr.write(redact(`ddbench: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`) + '\n');
      process.exitCode = EXIT.internal;
    }
  }
}

/**
 * Runs long work with Ctrl-C and SIGTERM turned into a cancellation: running trials
 * stop, scratch copies are removed and the command prints what it has; then it exits
 * 130 (SIGINT) or 143 (SIGTERM). A second signal quits at once.
 */
export async function withInterrupt(work: (signal: AbortSignal) => Promise<number>): Promise<number> {
  const cancel = cancelOnSignals((by) => progress(`\nddbench: ${by}: stopping the run and cleaning up (${by === 'SIGINT' ? 'Ctrl-C' : 'SIGTERM'} again to quit at once) …`));
  try {
    const code = await work(cancel.signal);
    return interruptedCode(cancel) ?? code;
  } catch (err) {
    const code = interruptedCode(cancel);
    // The run's own abort error is the interrupt, not a failure; anything else is reported as usual.
    if (code === undefined || !isAbortError(err, cancel.signal)) throw err;
    return code;
  } finally {
    cancel.dispose();
  }
}

function interruptedCode(cancel: Cancellation): number | undefined {
  const by = cancel.received();
  if (by === undefined) return undefined;
  progress(`ddbench: interrupted by ${by}; exit ${SIGNAL_EXIT_CODE[by]}`);
  return SIGNAL_EXIT_CODE[by];
}

function isAbortError(err: unknown, signal: AbortSignal): boolean {
  return err === signal.reason || err instanceof Interrupted || err instanceof TrialAborted || (err instanceof Error && err.name === 'AbortError');
}
