import { makeTempDir } from '../temp-dirs';

/** Runs `fn` with a fresh scratch folder that is removed afterwards, whatever happens (an exit included). */
export async function withScratch<T>(fn: (dir: string) => T | Promise<T>): Promise<T> {
  const scratch = makeTempDir('ddbench-scratch-');
  try {
    return await fn(scratch.dir);
  } finally {
    scratch.remove();
  }
}
