import type { SystemEntry } from '../../src/core/bugs/catalog';
import { simulate } from '../../src/core/verify/simulate';

/** A scenario that failed over simulated seeds: its first failing seed and why. */
export interface SimulatedFailure {
  scenario: string;
  seed: number | undefined;
  reason: string;
}

/**
 * Runs each scenario over `seeds` simulated seeds of the code in `codeDir`, in order,
 * yielding each one that fails; a caller that stops iterating skips the rest.
 */
export async function* simulatedFailures(system: SystemEntry, codeDir: string, scenarios: readonly string[], seeds: number): AsyncGenerator<SimulatedFailure> {
  for (const scenario of scenarios) {
    const r = await simulate(system, codeDir, scenario, { seeds, stopAtFirstFailure: true });
    if (r.failed > 0) yield { scenario, seed: r.firstFailingSeed, reason: r.firstFailure?.reason ?? '' };
  }
}
