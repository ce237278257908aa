import { spawn } from 'node:child_process';
import type { EventInput } from '../events/event';
import { readLines } from '../../runtime/ndjson';
import { parseEventLine } from './event-log';

export interface NodeProcessOptions {
  node: string;
  hostPath: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  inspectPort?: number;
  /** Microseconds since the run started, for events made from raw output lines. */
  now(): number;
  onEvent(event: EventInput): void;
}

export interface NodeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines the process wrote to stderr, for error messages. */
  stderrTail: string[];
}

export interface NodeProcess {
  /** Also the process group id: every node leads its own group. */
  pid: number;
  /** Resolves once the process exited and its output was fully read. */
  closed: Promise<NodeExit>;
}

const STDERR_TAIL_LINES = 20;

/** The inspector announces itself on stderr; those lines are not errors. */
const INSPECTOR_NOTICE = /^(Debugger listening on |Debugger attached\.|For help, see: https:\/\/nodejs\.org|Waiting for the debugger to disconnect)/;

/**
 * Spawns one live host in its own process group and turns its output into events:
 * stdout JSON lines are the runtime's events; any other stdout line becomes an info log
 * and every stderr line an error log, so nothing a node prints is lost.
 */
export function spawnNodeProcess(opts: NodeProcessOptions): NodeProcess {
  const inspect = opts.inspectPort === undefined ? [] : [`--inspect=127.0.0.1:${opts.inspectPort}`];
  const child = spawn(process.execPath, [...inspect, opts.hostPath], {
    cwd: opts.cwd,
    // Inside VS Code, execPath is Electron, which acts as plain Node only with this set.
    env: { ...opts.env, ELECTRON_RUN_AS_NODE: '1' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderrTail: string[] = [];
  const closed = new Promise<NodeExit>((resolve) => {
    child.once('error', (err) => {
      stderrTail.push(`spawn failed: ${err.message}`);
      resolve({ code: null, signal: null, stderrTail });
    });
    child.once('close', (code, signal) => resolve({ code, signal, stderrTail }));
  });
  if (child.pid === undefined) {
    throw new Error(`could not start node ${opts.node}: ${process.execPath} ${opts.hostPath} did not spawn`);
  }

  readLines(child.stdout, (line) => {
    const event = parseEventLine(line);
    opts.onEvent(event === undefined ? { ts: opts.now(), node: opts.node, kind: 'log', level: 'info', msg: line } : { ...event, node: opts.node });
  });
  readLines(child.stderr, (line) => {
    stderrTail.push(line);
    if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
    const level = INSPECTOR_NOTICE.test(line) ? 'info' : 'error';
    opts.onEvent({ ts: opts.now(), node: opts.node, kind: 'log', level, msg: line });
  });
  return { pid: child.pid, closed };
}
