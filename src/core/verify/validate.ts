import * as os from 'node:os';
import * as path from 'node:path';
import type { BugEntry, Catalog } from '../bugs/catalog';
import { findBugSystem } from '../bugs/catalog';
import { copySystemParts, materialiseBuggySource, referenceFix } from '../bugs/workspace';
import { applyUnifiedDiff, diffTrees } from '../patch/unified';
import { inPool } from '../pool';
import { runScenarioTrials, type TrialsResult } from '../repro/trials';
import { faultProblems, measureFaults, type MeasuredFaults } from './faults';
import { withScratch } from './scratch';
import { VALIDATE_BUGGY_SEEDS, VALIDATE_FIX_SEEDS, verifyInSimulation, type SimVerification } from './simulate';
import { SOURCE_ROOTS, simOptions, type CheckOptions } from './verify';

export interface ValidationResult {
  bugId: string;
  ok: boolean;
  /** Share of buggy-code trials whose verdict was fail or timeout (a reproduction). */
  buggyFailureRate: number;
  buggy: TrialsResult;
  fixed: TrialsResult;
  regression: { code: 'buggy' | 'fixed'; result: TrialsResult }[];
  /** The reproducer over simulated seeds: the buggy code's failure rate, and the fix over at least VALIDATE_FIX_SEEDS seeds. */
  sim?: SimVerification;
  /** The faults of the buggy code's first failing simulated run, and the tier they give. */
  faults?: MeasuredFaults;
  problems: string[];
}

export const REQUIRED_FAILURE_RATE = 0.9;

/**
 * Checks a bug of the set: its reproducer fails on the buggy code in at least 90% of
 * trials, passes on the fixed code in all, and the regression checks pass on both.
 */
export async function validateBug(
  catalog: Catalog,
  bug: BugEntry,
  opts: CheckOptions & {
    keepRuns?: string;
    /** Run the regression checks live (default); false leaves them to the caller (the quick CI validation runs them simulated). */
    liveRegression?: boolean;
  } = {},
): Promise<ValidationResult> {
  const system = findBugSystem(catalog, bug);
  const trials = opts.trials ?? bug.manifest.reproducer.trials;
  const run = async (runRoot: string) =>
    withScratch(async (scratch) => {
      const buggyDir = path.join(scratch, 'buggy');
      const fixedDir = path.join(scratch, 'fixed');
      materialiseBuggySource(system, bug, buggyDir);
      materialiseBuggySource(system, bug, fixedDir);
      applyUnifiedDiff(fixedDir, referenceFix(bug));
      const correct = path.join(scratch, 'correct');
      copySystemParts(system, correct);
      const problems: string[] = [];
      if (diffTrees(correct, fixedDir, SOURCE_ROOTS)) problems.push('reversing bug.patch does not give back the correct source');
      const scenario = bug.manifest.reproducer.scenario;
      // Every run has its own cluster and ports: the buggy and fixed code, and each regression check on each, run side by side.
      const [buggy, fixed] = await Promise.all([
        runScenarioTrials(system, buggyDir, scenario, path.join(runRoot, 'buggy'), { ...opts, trials }),
        runScenarioTrials(system, fixedDir, scenario, path.join(runRoot, 'fixed'), { ...opts, trials }),
      ]);
      const checks = (opts.liveRegression === false ? [] : bug.manifest.regression).flatMap((name) => (['buggy', 'fixed'] as const).map((code) => ({ name, code, dir: code === 'buggy' ? buggyDir : fixedDir })));
      const regression: ValidationResult['regression'] = await inPool(
        checks,
        opts.concurrency ?? os.cpus().length,
        async ({ name, code, dir }) => ({
          code,
          result: await runScenarioTrials(system, dir, name, path.join(runRoot, `${code}-regression`), { ...opts, trials: opts.regressionTrials ?? 1, onTrial: undefined }),
        }),
        opts.signal,
      );
      for (const { code, result } of regression) {
        if (result.failed > 0) problems.push(`regression "${result.scenario}" fails on the ${code} code: ${result.trials.find((t) => t.verdict !== 'pass')?.reason ?? ''}`);
      }
      const reproductions = buggy.trials.filter((t) => t.verdict === 'fail' || t.verdict === 'timeout').length;
      const buggyFailureRate = buggy.trials.length ? reproductions / buggy.trials.length : 0;
      if (buggyFailureRate < REQUIRED_FAILURE_RATE) problems.push(`reproducer fails on the buggy code in ${reproductions}/${buggy.trials.length} trials (needs ${Math.round(REQUIRED_FAILURE_RATE * 100)}%)`);
      if (fixed.failed > 0) problems.push(`reproducer fails on the fixed code in ${fixed.failed}/${fixed.trials.length} trials: ${fixed.trials.find((t) => t.verdict !== 'pass')?.reason ?? ''}`);
      if (opts.sim === false || system.manifest.upstream !== undefined || opts.signal?.aborted) return { bugId: bug.id, ok: problems.length === 0, buggyFailureRate, buggy, fixed, regression, problems };
      const sim = await verifyInSimulation(system, scenario, buggyDir, fixedDir, { ...simOptions(opts), measureSeeds: opts.simBuggySeeds ?? VALIDATE_BUGGY_SEEDS, floor: VALIDATE_FIX_SEEDS });
      problems.push(...simProblems(sim));
      const faults = await measureFaults(system, bug, buggyDir);
      problems.push(...faultProblems(bug, faults));
      return { bugId: bug.id, ok: problems.length === 0, buggyFailureRate, buggy, fixed, regression, sim, ...(faults && { faults }), problems };
    });
  if (opts.keepRuns) return run(path.join(opts.keepRuns, bug.id));
  return withScratch((runRoot) => run(runRoot));
}

function simProblems(sim: SimVerification): string[] {
  const problems: string[] = [];
  if (sim.buggy.failed === 0) problems.push(`reproducer never fails under simulation on the buggy code (${sim.buggy.seeds} seeds from ${sim.buggy.from})`);
  const f = sim.fixed;
  if (f.failed > 0) problems.push(`reproducer fails under simulation on the fixed code at seed ${f.firstFailingSeed}: ${f.firstFailure?.reason ?? ''}`);
  else if (f.seeds < sim.required) problems.push(`only ${f.seeds} of ${sim.required} simulated seeds ran on the fixed code`);
  return problems;
}

