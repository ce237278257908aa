/** Whether a process exists (a harness that recorded a run, a lock's holder), ours or another user's. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return err instanceof Error && 'code' in err && err.code === 'EPERM';
  }
}
