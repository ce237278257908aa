import { Option } from 'commander';
import { z } from 'zod';
import { findBug, loadCatalog } from '../../core/bugs/catalog';
import { requireInstalled } from '../../core/bugs/upstream-installed';
import { UserError } from '../../core/errors';
import { validationLines } from '../../core/verify/format';
import { validateBug, type ValidationResult } from '../../core/verify/validate';
import { clusterBackendOptions, CONCURRENCY_HELP, count, kindOptions, optionGroup, options, outputOptions, simCheckOptions, trialOptions, type OptionsOf } from '../options';
import { EXIT, printJson, say, withInterrupt } from '../output';
import { trialProgress } from '../report';
import { checkSimProgress } from '../sim-report';

export const validateOptions = options(
  trialOptions({ trials: "trials per code version (default: each bug's)", seed: 'seed of the first trial', concurrency: CONCURRENCY_HELP }),
  optionGroup([new Option('--keep-runs <dir>', "keep every trial's events under this folder")], z.object({ keepRuns: z.string().optional() })),
  simCheckOptions({
    seeds: "simulated seeds the fix must pass (default: at least 1000, more if the buggy code's failure rate calls for it)",
    buggySeeds: "simulated seeds that measure the buggy code's failure rate (default: 200)",
  }),
  optionGroup(
    [new Option('--regression-trials <n>', 'live trials of each regression check on each code version (default: 1)')],
    z.object({ regressionTrials: count('--regression-trials', 1).optional() }),
  ),
  kindOptions,
  outputOptions(),
  clusterBackendOptions,
);

export async function commandValidate(ids: string[], { json, kind, ...checks }: OptionsOf<typeof validateOptions>): Promise<number> {
  const catalog = await loadCatalog();
  if (ids.length && kind !== undefined) throw new UserError('--kind narrows every bug; leave it out when naming bugs');
  const bugs = ids.length ? ids.map((id) => findBug(catalog, id)) : catalog.bugs.filter((b) => kind === undefined || b.kind === kind);
  requireInstalled(catalog, bugs);
  const started = Date.now();
  const results: ValidationResult[] = [];
  return withInterrupt(async (signal) => {
    for (const bug of bugs) {
      if (signal.aborted) break;
      if (!json) say(`${bug.id}: validating…`);
      const r = await validateBug(catalog, bug, { ...checks, signal, onTrial: trialProgress('  '), onSimSeed: json ? undefined : checkSimProgress() });
      results.push(r);
      if (!json) for (const line of validationLines(r)) say(line);
    }
    const ok = results.every((r) => r.ok) && catalog.problems.length === 0;
    const seconds = (Date.now() - started) / 1000;
    if (json) printJson({ ok, seconds, bugs: results, catalogProblems: catalog.problems });
    else {
      for (const p of catalog.problems) say(`catalogue problem: ${p}`);
      say(`\n${results.filter((r) => r.ok).length}/${results.length} bugs valid in ${seconds.toFixed(0)} s`);
    }
    return ok ? EXIT.ok : EXIT.failed;
  });
}
