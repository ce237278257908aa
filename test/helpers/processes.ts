import { execFileSync } from 'node:child_process';

/** Pids of running node processes of the runtime host (the cluster's nodes). */
export function liveHostProcesses(): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes('runtime/live-host.js') && !/^\s*\d+\s+Z/.test(l))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}
