import type { Json } from '../../runtime/types';
import type { Isolation } from '../sandbox/levels';
import { BuildFailed } from '../cluster/upstream/build';
import { ProgressTimeout } from './context';
import { InvariantViolation } from './scenario';

export type Verdict = 'pass' | 'fail' | 'error' | 'timeout';

export interface TrialResult {
  index: number;
  scenario: string;
  seed: number;
  verdict: Verdict;
  durationMs: number;
  /** Why it did not pass, in one line. */
  reason?: string;
  eventsFile: string;
  violation?: { check: string; details: Record<string, Json> };
  /** How the code under test was isolated (sandbox/isolation.ts); absent when no node started. */
  isolation?: Isolation;
}

/** A trial that ran past its scenario's budget. */
export class TrialTimeout extends Error {}
/** A trial cancelled by its caller. */
export class TrialAborted extends Error {}

/** The verdict an error from a trial stands for; the simulated trial uses it too. */
export function classify(err: unknown): Pick<TrialResult, 'verdict' | 'reason' | 'violation'> {
  if (err instanceof InvariantViolation) {
    return { verdict: 'fail', reason: err.message, violation: { check: err.check, details: err.details } };
  }
  if (err instanceof ProgressTimeout) {
    return { verdict: 'fail', reason: err.message, violation: { check: `progress: ${err.description}`, details: { timeoutMs: err.timeoutMs } } };
  }
  if (err instanceof BuildFailed) return { verdict: 'fail', reason: err.message, violation: { check: 'the code builds', details: { output: err.output } } };
  if (err instanceof TrialTimeout) return { verdict: 'timeout', reason: err.message };
  if (err instanceof TrialAborted) return { verdict: 'error', reason: 'cancelled' };
  return { verdict: 'error', reason: err instanceof Error ? err.message : String(err) };
}

