import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Temporary folders of a run (scratch copies, which can hold a fixed source) that are
 * removed when the run is done, and also when the process exits without getting there
 * (a second Ctrl-C, process.exit): the removal is synchronous, so it works inside 'exit'.
 */
const live = new Set<string>();
let hooked = false;

export interface TempDir {
  readonly dir: string;
  remove(): void;
}

export function makeTempDir(prefix: string): TempDir {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const dir of live) fs.rmSync(dir, { recursive: true, force: true });
    });
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  live.add(dir);
  return {
    dir,
    remove: () => {
      fs.rmSync(dir, { recursive: true, force: true });
      live.delete(dir);
    },
  };
}
