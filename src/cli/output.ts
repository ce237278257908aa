import { InvalidArgumentError } from 'commander';
import { UserError } from '../core/errors';

/** Machine output: one JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** Human output goes to stdout; progress goes to stderr so `--json` stdout stays clean. */
export function say(line = ''): void {
  process.stdout.write(line + '\n');
}

export function progress(line: string): void {
  process.stderr.write(line + '\n');
}

/** Exit codes: 0 success, 1 the check failed, 2 bad input or an error the user can fix. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Runs a command body, turning errors into a message and exit code instead of a stack trace. */
export async function runCommand(body: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await body();
  } catch (err) {
    if (err instanceof UserError) {
      process.stderr.write(`ddbench: ${err.message}\n`);
      process.exitCode = EXIT.usage;
    } else {
      process.stderr.write(`ddbench: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = EXIT.usage;
    }
  }
}

export function parseCount(name: string, min: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number >= ${min}.`);
    return n;
  };
}

export interface RunOpts {
  trials?: number;
  seed?: number;
  concurrency?: number;
  json?: boolean;
  /** Simulated seeds beside the live trials; commander's --no-sim sets false. */
  sim?: boolean;
  seeds?: number;
}

export function parseNumber(name: string, min: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new InvalidArgumentError(`${name} must be a number >= ${min}.`);
    return n;
  };
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
