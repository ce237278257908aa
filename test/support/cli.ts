import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { packageRoot } from '../../src/core/paths';

/** The CLI from source (no build needed), as a user runs it, in `cwd`. */
export function ddbenchFromSource(args: string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), path.join(packageRoot(), 'src', 'cli', 'main.ts'), ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The built CLI (bin/ddbench.js) with `env` over this process's, without blocking this process (which may serve what the CLI calls). */
export function ddbenchBuilt(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return startDdbenchBuilt(args, env).done;
}

export interface RunningCli {
  child: ChildProcess;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited and its output is read. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

/** The built CLI as a running process, to signal it while it works. */
export function startDdbenchBuilt(args: string[], env: Record<string, string | undefined>): RunningCli {
  const child = spawn(process.execPath, [path.join(packageRoot(), 'bin', 'ddbench.js'), ...args], { env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}
