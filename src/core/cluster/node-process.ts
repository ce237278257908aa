import { spawn } from 'node:child_process';
import type { EventInput } from '../events/event';
import { collectNodeOutput, type NodeExit } from './node-output';

export interface NodeProcessOptions {
  node: string;
  hostPath: string;
  cwd: string;
  /** The live host's own variables (runtime/host-env.ts); nothing of the harness's environment is passed on. */
  env: Record<string, string>;
  inspectPort?: number;
  /** Microseconds since the run started, for events made from raw output lines. */
  now(): number;
  onEvent(event: EventInput): void;
}

export interface NodeProcess {
  /** Also the process group id: every node leads its own group. */
  pid: number;
  /** Resolves once the process exited and its output was fully read. */
  closed: Promise<NodeExit>;
}

/**
 * A node's whole environment: what the live host reads and nothing else, so the code
 * under test never sees the harness's (API keys, tokens, the bug set's location).
 */
export function nodeEnv(hostEnv: Record<string, string>): Record<string, string> {
  return {
    // Windows' socket library fails to load without it.
    ...(process.platform === 'win32' && process.env.SystemRoot !== undefined && { SystemRoot: process.env.SystemRoot }),
    ...hostEnv,
    // Inside VS Code, execPath is Electron, which acts as plain Node only with this set.
    ELECTRON_RUN_AS_NODE: '1',
  };
}

/** Spawns one live host in its own process group; its output becomes events (node-output.ts). */
export function spawnNodeProcess(opts: NodeProcessOptions): NodeProcess {
  const inspect = opts.inspectPort === undefined ? [] : [`--inspect=127.0.0.1:${opts.inspectPort}`];
  const child = spawn(process.execPath, [...inspect, opts.hostPath], {
    cwd: opts.cwd,
    env: nodeEnv(opts.env),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderrTail = collectNodeOutput(child.stdout, child.stderr, opts);
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
  return { pid: child.pid, closed };
}
