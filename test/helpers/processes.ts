import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';

/**
 * Pids of running cluster nodes (runtime host processes) whose data folder lies under
 * `root`, so a test sees its own nodes and not those of other runs on the machine.
 */
export function liveHostProcesses(root: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes('runtime/live-host.js') && !/^\s*\d+\s+Z/.test(l))
    .map((l) => Number(l.trim().split(/\s+/)[0]))
    .filter((pid) => dataDirOf(pid)?.startsWith(root));
}

function dataDirOf(pid: number): string | undefined {
  try {
    const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return env.find((v) => v.startsWith('DDBENCH_DATA_DIR='))?.slice('DDBENCH_DATA_DIR='.length);
  } catch {
    return undefined;
  }
}
