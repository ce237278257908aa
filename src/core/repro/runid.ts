import { randomBytes } from 'node:crypto';

/** A sortable, unique run id: UTC time plus a short random suffix. */
export function newRunId(): string {
  return `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
}
