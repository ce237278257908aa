import { findBug, loadCatalog } from '../../core/bugs/catalog';
import { validateBug, type ValidationResult } from '../../core/verify/validate';
import { backendOptions, type BackendOpts } from '../backend';
import { EXIT, printJson, progress, say, type RunOpts } from '../output';
import { trialLine } from '../report';
import { checkSimProgress } from '../sim-report';

export interface ValidateOpts {
  keepRuns?: string;
  buggySeeds?: number;
  regressionTrials?: number;
}

export async function commandValidate(ids: string[], o: RunOpts & BackendOpts & ValidateOpts): Promise<number> {
  const catalog = await loadCatalog();
  const bugs = ids.length ? ids.map((id) => findBug(catalog, id)) : catalog.bugs;
  const started = Date.now();
  const results: ValidationResult[] = [];
  for (const bug of bugs) {
    if (!o.json) say(`${bug.id}: validating…`);
    const r = await validateBug(catalog, bug, {
      backend: backendOptions(o),
      trials: o.trials,
      seed: o.seed,
      concurrency: o.concurrency,
      keepRuns: o.keepRuns,
      sim: o.sim,
      simSeeds: o.seeds,
      simBuggySeeds: o.buggySeeds,
      regressionTrials: o.regressionTrials,
      onTrial: (t, done, total) => progress(`  [${done}/${total}]${trialLine(t)}`),
      onSimSeed: o.json ? undefined : checkSimProgress(),
    });
    results.push(r);
    if (!o.json) {
      say(`${bug.id}: ${r.ok ? 'OK' : 'FAILED'} — buggy fails ${pct(r.buggyFailureRate)} (${r.buggy.failed}/${r.buggy.trials.length}), fixed passes ${r.fixed.passed}/${r.fixed.trials.length}`);
      if (r.sim) {
        const { buggy, fixed } = r.sim;
        say(`  simulation: buggy fails ${pct(buggy.failureRate)} of seeds (${buggy.failed}/${buggy.seeds}), fixed passes ${fixed.seeds - fixed.failed}/${r.sim.required} seeds (${fixed.seedsPerSecond.toFixed(0)} seeds/s)`);
      }
      for (const g of r.regression) say(`  regression ${g.result.scenario} on the ${g.code} code: ${g.result.passed}/${g.result.trials.length} passed`);
      for (const p of r.problems) say(`  problem: ${p}`);
    }
  }
  const ok = results.every((r) => r.ok) && catalog.problems.length === 0;
  const seconds = (Date.now() - started) / 1000;
  if (o.json) printJson({ ok, seconds, bugs: results, catalogProblems: catalog.problems });
  else {
    for (const p of catalog.problems) say(`catalogue problem: ${p}`);
    say(`\n${results.filter((r) => r.ok).length}/${results.length} bugs valid in ${seconds.toFixed(0)} s`);
  }
  return ok ? EXIT.ok : EXIT.failed;
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}
