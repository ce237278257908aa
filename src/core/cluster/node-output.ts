import type { Readable } from 'node:stream';
import type { EventInput } from '../events/event';
import { readLines } from '../../runtime/ndjson';
import { parseEventLine } from './event-log';

/** How a node's process or container ended. */
export interface NodeExit {
  /** Exit status; null when a signal ended a local process. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines the node wrote to stderr, for error messages. */
  stderrTail: string[];
}

export interface NodeOutputOptions {
  node: string;
  /** Microseconds since the run started, for events made from raw output lines. */
  now(): number;
  onEvent(event: EventInput): void;
}

const STDERR_TAIL_LINES = 20;

/** The inspector announces itself on stderr; those lines are not errors. */
const INSPECTOR_NOTICE = /^(Debugger listening on |Debugger attached\.|For help, see: https:\/\/nodejs\.org|Waiting for the debugger to disconnect)/;

/**
 * Turns a node's output streams into events, the same for every backend: stdout JSON
 * lines are the runtime's events; any other stdout line becomes an info log and every
 * stderr line an error log, so nothing a node prints is lost. Returns the stderr tail,
 * which keeps filling as lines arrive.
 */
export function collectNodeOutput(stdout: Readable, stderr: Readable, opts: NodeOutputOptions): string[] {
  const stderrTail: string[] = [];
  readLines(stdout, (line) => {
    const event = parseEventLine(line);
    opts.onEvent(event === undefined ? { ts: opts.now(), node: opts.node, kind: 'log', level: 'info', msg: line } : { ...event, node: opts.node });
  });
  readLines(stderr, (line) => {
    stderrTail.push(line);
    if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
    const level = INSPECTOR_NOTICE.test(line) ? 'info' : 'error';
    opts.onEvent({ ts: opts.now(), node: opts.node, kind: 'log', level, msg: line });
  });
  return stderrTail;
}

export function describeExit(exit: NodeExit): string {
  const how = exit.signal !== null ? `signal ${exit.signal}` : `code ${exit.code}`;
  return exit.stderrTail.length === 0 ? how : `${how}; its last stderr lines:\n${exit.stderrTail.join('\n')}`;
}
