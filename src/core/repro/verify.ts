import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BugEntry, Catalog, SystemEntry } from '../bugs/catalog';
import { findSystem } from '../bugs/catalog';
import { copySystemParts, materialiseBuggySource } from '../bugs/workspace';
import { UserError } from '../errors';
import { applyUnifiedDiff, diffTrees, reverseUnifiedDiff, type AppliedPatch } from '../patch/unified';
import { VALIDATE_BUGGY_SEEDS, VALIDATE_FIX_SEEDS, verifyInSimulation, type SimCheckOptions, type SimVerification } from '../sim/verification';
import { resolveWorkspace, runsDir } from './launch';
import { newRunId } from './runid';
import { runScenarioTrials, type TrialsOptions, type TrialsResult } from './runner';
import { inPool } from '../pool';

/** Which code a verification runs: a patch file, the workspace's own changes, or the bug's reference fix. */
export type FixSource = { kind: 'patch'; file: string } | { kind: 'workspace' } | { kind: 'reference' };

export interface VerifyResult extends TrialsResult {
  bugId: string;
  /** The reproducer passed every trial and every regression check passed (and every simulated seed, unless turned off). */
  verified: boolean;
  regression: TrialsResult[];
  patch: AppliedPatch & { diff: string };
  runDir: string;
  /** The bug's failure rate over simulated seeds of the buggy code, and the fix's run over as many seeds as that rate calls for. */
  sim?: SimVerification;
}

type CheckOptions = Partial<TrialsOptions> &
  SimCheckOptions & {
    regressionTrials?: number;
    /** Stop at the first failing check (reproducer, then each regression check, then simulation): the verdict is known, the rest is skipped. */
    failFast?: boolean;
  };

const SOURCE_ROOTS = ['src'];

/** The workspace's changes to the bug's original code, as a unified diff. */
export async function workspaceDiff(dir: string): Promise<string> {
  const ws = await resolveWorkspace(dir);
  return withScratch((base) => {
    materialiseBuggySource(ws.system, ws.bug, base);
    return diffTrees(base, ws.info.dir, SOURCE_ROOTS, ['node_modules']);
  });
}

/**
 * Applies a fix to a scratch copy of the bug's original code (never the workspace),
 * then runs the reproducer and the bug's regression checks on it.
 */
export async function verifyFix(dir: string, source: FixSource, opts: CheckOptions = {}): Promise<VerifyResult> {
  const ws = await resolveWorkspace(dir);
  const diff =
    source.kind === 'reference'
      ? reverseUnifiedDiff(fs.readFileSync(path.join(ws.bug.dir, 'bug.patch'), 'utf8'))
      : source.kind === 'patch'
        ? readPatchFile(source.file)
        : await workspaceDiff(dir);
  if (!diff.trim()) throw new UserError(`${ws.info.dir}: the workspace has no changes to the bug's code; edit src/ or pass --patch FILE`);
  const runDir = path.join(runsDir(ws.info.dir), `verify-${newRunId()}`);
  return withScratch(async (scratch) => {
    materialiseBuggySource(ws.system, ws.bug, scratch);
    const applied = applyUnifiedDiff(scratch, diff);
    const checks = await checkCode(ws.system, ws.bug, scratch, runDir, opts);
    if (opts.sim === false || opts.signal?.aborted || (opts.failFast && !checks.verified)) return { bugId: ws.bug.id, runDir, patch: { ...applied, diff }, ...checks };
    const sim = await withScratch((buggyDir) => {
      materialiseBuggySource(ws.system, ws.bug, buggyDir);
      return verifyInSimulation(ws.system, ws.bug.manifest.reproducer.scenario, buggyDir, scratch, simOptions(opts));
    });
    return { bugId: ws.bug.id, runDir, patch: { ...applied, diff }, ...checks, verified: checks.verified && sim.passed, sim };
  });
}

function simOptions(opts: CheckOptions): Parameters<typeof verifyInSimulation>[4] {
  return { seeds: opts.simSeeds, measureSeeds: opts.simBuggySeeds, from: opts.seed, concurrency: opts.concurrency, signal: opts.signal, onSeed: opts.onSimSeed };
}

async function checkCode(system: SystemEntry, bug: BugEntry, codeDir: string, runDir: string, opts: CheckOptions) {
  const trials = opts.trials ?? bug.manifest.reproducer.trials;
  const repro = await runScenarioTrials(system, codeDir, bug.manifest.reproducer.scenario, runDir, { ...opts, trials });
  const regression: TrialsResult[] = [];
  for (const name of bug.manifest.regression) {
    if (opts.signal?.aborted || (opts.failFast && [repro, ...regression].some((r) => r.failed > 0))) break;
    regression.push(await runScenarioTrials(system, codeDir, name, runDir, { ...opts, trials: opts.regressionTrials ?? 2, onTrial: undefined }));
  }
  const verified = repro.failed === 0 && repro.trials.length === trials && regression.every((r) => r.failed === 0) && regression.length === bug.manifest.regression.length;
  return { ...repro, regression, verified };
}

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
  const system = findSystem(catalog, bug.system);
  const trials = opts.trials ?? bug.manifest.reproducer.trials;
  const run = async (runRoot: string) =>
    withScratch(async (scratch) => {
      const buggyDir = path.join(scratch, 'buggy');
      const fixedDir = path.join(scratch, 'fixed');
      materialiseBuggySource(system, bug, buggyDir);
      materialiseBuggySource(system, bug, fixedDir);
      applyUnifiedDiff(fixedDir, reverseUnifiedDiff(fs.readFileSync(path.join(bug.dir, 'bug.patch'), 'utf8')));
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
      if (opts.sim === false || opts.signal?.aborted) return { bugId: bug.id, ok: problems.length === 0, buggyFailureRate, buggy, fixed, regression, problems };
      const sim = await verifyInSimulation(system, scenario, buggyDir, fixedDir, { ...simOptions(opts), measureSeeds: opts.simBuggySeeds ?? VALIDATE_BUGGY_SEEDS, floor: VALIDATE_FIX_SEEDS });
      problems.push(...simProblems(sim));
      return { bugId: bug.id, ok: problems.length === 0, buggyFailureRate, buggy, fixed, regression, sim, problems };
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

function readPatchFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read patch ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

/** Runs `fn` with a fresh scratch folder that is removed afterwards, whatever happens. */
async function withScratch<T>(fn: (dir: string) => T | Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-scratch-'));
  try {
    return await fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
