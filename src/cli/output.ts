import { UserError } from '../core/errors';
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
 * tell "fix your input" from "report a bug".
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, internal: 70 } as const;

/** The epilogue of `ddbench --help`. */
export const EXIT_HELP = `
Exit codes:
  ${EXIT.ok}   success
  ${EXIT.failed}   the check failed (a trial or seed failed, a fix is not verified, a bug is not valid)
  ${EXIT.usage}   bad input or an error you can fix (the message says what and how)
  ${EXIT.internal}  an internal error of ddbench (a defect: the message has its stack)`;

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

/** Runs long work with Ctrl-C turned into a cancellation, so running trials stop and clean up. */
export async function withInterrupt<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    return await work(controller.signal);
  } finally {
    process.off('SIGINT', onSigint);
  }
}
