import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Runs `fn` with a fresh scratch folder that is removed afterwards, whatever happens. */
export async function withScratch<T>(fn: (dir: string) => T | Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-scratch-'));
  try {
    return await fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
