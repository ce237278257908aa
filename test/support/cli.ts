import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { packageRoot } from '../../src/core/paths';

/** The CLI from source (no build needed), as a user runs it, in `cwd`. */
export function ddbenchFromSource(args: string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), path.join(packageRoot(), 'src', 'cli', 'main.ts'), ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
