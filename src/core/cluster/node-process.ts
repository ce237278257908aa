import { spawn } from 'node:child_process';
import type { EventInput } from '../events/event';
import type { SandboxCommand } from '../sandbox/sandbox';
import { collectNodeOutput, type NodeExit } from './node-output';

export interface NodeProcessOptions {
  node: string;
  /** The sandboxed live host to run (sandbox.ts). */
  command: SandboxCommand;
  /** Microseconds since the run started, for events made from raw output lines. */
  now(): number;
  onEvent(event: EventInput): void;
}

export interface NodeProcess {
  /** Also the process group id: every node leads its own group. */
  pid: number;
  /** Resolves once the process exited and its output was read. */
  closed: Promise<NodeExit>;
}

/**
 * How long output may stay open after the node exited: a process it started and let
 * go (outside a sandbox, where nothing ends it) can hold the pipes forever.
 */
const OUTPUT_GRACE_MS = 2_000;

/**
 * A node's whole environment: what the live host reads and nothing else, so the code
 * under test never sees the harness's (API keys, tokens, the bug set's location).
 */
export function nodeEnv(hostEnv: Record<string, string>): Record<string, string> {
  return {
    // Windows' socket library fails to load without it.
    ...(process.platform === 'win32' && process.env.SystemRoot !== undefined && { SystemRoot: process.env.SystemRoot }),
    ...hostEnv,
  };
}

/** Spawns one live host in its own process group; its output becomes events (node-output.ts). */
export function spawnNodeProcess(opts: NodeProcessOptions): NodeProcess {
  const { command } = opts;
  const child = spawn(command.command, command.args, { cwd: command.cwd, env: command.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderrTail = collectNodeOutput(child.stdout, child.stderr, opts);
  const closed = new Promise<NodeExit>((resolve) => {
    child.once('error', (err) => {
      stderrTail.push(`spawn failed: ${err.message}`);
      resolve({ code: null, signal: null, stderrTail });
    });
    child.once('exit', () => {
      const grace = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, OUTPUT_GRACE_MS);
      grace.unref();
      child.once('close', () => clearTimeout(grace));
    });
    child.once('close', (code, signal) => resolve({ code, signal, stderrTail }));
  });
  if (child.pid === undefined) {
    throw new Error(`could not start node ${opts.node}: ${command.command} did not spawn`);
  }
  return { pid: child.pid, closed };
}
