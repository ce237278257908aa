import * as fs from 'node:fs';
import { UserError } from './errors';
import { isAlive } from './pid';

/** A lock another live process holds. */
export class LockHeld extends UserError {
  constructor(
    readonly file: string,
    readonly pid: number,
    message: string,
  ) {
    super(message);
    this.name = 'LockHeld';
  }
}

/**
 * Takes `file` as an exclusive lock holding this process's pid, or throws LockHeld
 * naming the live holder; a lock whose holder is gone (killed, crashed) is taken over.
 * `holder(pid)` words the refusal. Returns the release, which removes the file.
 */
export function acquireLock(file: string, holder: (pid: number) => string): () => void {
  // Written whole under a private name, then linked into place: link(2) fails if the
  // lock exists (like O_EXCL), and a lock is never seen without its pid.
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${process.pid}\n`, { mode: 0o644 });
  try {
    for (;;) {
      try {
        fs.linkSync(temp, file);
        return () => {
          if (heldBy(file) === process.pid) fs.rmSync(file, { force: true });
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const pid = heldBy(file);
      if (pid !== undefined && pid !== process.pid && isAlive(pid)) throw new LockHeld(file, pid, holder(pid));
      // Stale: its holder died without releasing it. (Two processes taking over the same
      // stale lock at the same instant could both succeed; a dead holder is rare enough.)
      fs.rmSync(file, { force: true });
    }
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** Like acquireLock, waiting while a live holder has it (merges are short). */
export async function acquireLockWaiting(file: string, holder: (pid: number) => string, pollMs = 50): Promise<() => void> {
  for (;;) {
    try {
      return acquireLock(file, holder);
    } catch (err) {
      if (!(err instanceof LockHeld)) throw err;
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

function heldBy(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
