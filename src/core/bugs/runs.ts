import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { DDBENCH_DIR } from '../paths';

/** The seed of a run or of the first trial when none is given. */
export const DEFAULT_SEED = 1;

/** A sortable, unique run id: UTC time plus a short random suffix. */
export function newRunId(): string {
  return `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
}

/** Where a workspace keeps its runs (trials, replays, captured evidence). */
export function runsDir(workspaceDir: string): string {
  return path.join(workspaceDir, DDBENCH_DIR, 'runs');
}
