import * as fs from 'node:fs';
import { localIsolation, requireIsolation } from '../sandbox/isolation';
import { weakestIsolation, type Isolation } from '../sandbox/levels';
import * as path from 'node:path';
import type { BugEntry, Catalog, SystemEntry } from '../bugs/catalog';
import { newRunId, runsDir } from '../bugs/runs';
import { materialiseBuggySource, referenceFix, resolveWorkspace } from '../bugs/workspace';
import { UserError } from '../errors';
import { applyUnifiedDiff, diffTrees, type AppliedPatch } from '../patch/unified';
import { runScenarioTrials, type TrialsOptions, type TrialsResult } from '../repro/trials';
import { buggyCodeChecks } from './baseline';
import { failedChecks, movedChecks, type FailedCheck } from './checks';
import { withScratch } from './scratch';
import { verifyInSimulation, type SimCheckOptions, type SimVerification } from './simulate';

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
  /** The weakest isolation any run of the patched code had: what the verdict can claim. */
  isolation?: Isolation;
  /** Each check that failed (reproducer, regression checks, simulated seeds), once. */
  failing: FailedCheck[];
  /** The failing checks that the bug's own code never fails: the fix moved the failure. */
  moved: FailedCheck[];
}

export type CheckOptions = Partial<TrialsOptions> &
  SimCheckOptions & {
    regressionTrials?: number;
    /** Stop at the first failing check (reproducer, then each regression check, then simulation): the verdict is known, the rest is skipped. */
    failFast?: boolean;
    /** The bug set the workspace's bug comes from (default: the configured one). */
    catalog?: Catalog;
    /** Refuse to run unless the code under test gets at least this isolation (a study's rule). */
    requireIsolation?: Isolation;
  };

/** What a fix may change: the system's source. */
export const SOURCE_ROOTS = ['src'];

/** The workspace's changes to the bug's original code, as a unified diff. */
export async function workspaceDiff(dir: string, catalog?: Catalog): Promise<string> {
  const ws = await resolveWorkspace(dir, catalog);
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
  const ws = await resolveWorkspace(dir, opts.catalog);
  const diff =
    source.kind === 'reference'
      ? referenceFix(ws.bug)
      : source.kind === 'patch'
        ? readPatchFile(source.file)
        : await workspaceDiff(dir, opts.catalog);
  if (!diff.trim()) throw new UserError(`${ws.info.dir}: the workspace has no changes to the bug's code; edit src/ or pass --patch FILE`);
  const runDir = path.join(runsDir(ws.info.dir), `verify-${newRunId()}`);
  return withScratch(async (scratch) => {
    materialiseBuggySource(ws.system, ws.bug, scratch);
    const applied = applyUnifiedDiff(scratch, diff, patchName(source));
    const checks = await checkCode(ws.system, ws.bug, scratch, runDir, opts);
    const base = { bugId: ws.bug.id, runDir, patch: { ...applied, diff }, ...checks };
    // A real upstream system has no simulation: its verdict is the live trials'.
    if (opts.sim === false || ws.system.manifest.upstream !== undefined || opts.signal?.aborted || (opts.failFast && !checks.verified)) {
      const failing = failedChecks([checks, ...checks.regression]);
      const moved = failing.length > 0 && !opts.signal?.aborted ? movedChecks(failing, await buggyCodeChecks(ws, opts.signal)) : [];
      return { ...base, failing, moved };
    }
    const sim = await withScratch((buggyDir) => {
      materialiseBuggySource(ws.system, ws.bug, buggyDir);
      return verifyInSimulation(ws.system, ws.bug.manifest.reproducer.scenario, buggyDir, scratch, simOptions(opts));
    });
    // The simulated fix ran in its own sandbox: the verdict claims the weaker of that and the live runs'.
    const isolation = weakestIsolation([sim.fixed.isolation, checks.isolation]);
    const failing = failedChecks([checks, ...checks.regression], [sim.fixed]);
    const moved = movedChecks(failing, failedChecks([], [sim.buggy]).map((c) => c.check));
    return { ...base, verified: checks.verified && sim.passed, sim, ...(isolation !== undefined && { isolation }), failing, moved };
  });
}

export function simOptions(opts: CheckOptions): Parameters<typeof verifyInSimulation>[4] {
  return { seeds: opts.simSeeds, measureSeeds: opts.simBuggySeeds, from: opts.seed, concurrency: opts.concurrency, signal: opts.signal, onSeed: opts.onSimSeed };
}

async function checkCode(system: SystemEntry, bug: BugEntry, codeDir: string, runDir: string, opts: CheckOptions) {
  requireIsolation(opts.backend?.backend === 'docker' ? 'docker' : localIsolation(), opts.requireIsolation, `verifying ${bug.manifest.id}`);
  const trials = opts.trials ?? bug.manifest.reproducer.trials;
  const repro = await runScenarioTrials(system, codeDir, bug.manifest.reproducer.scenario, runDir, { ...opts, trials });
  const regression: TrialsResult[] = [];
  for (const name of bug.manifest.regression) {
    if (opts.signal?.aborted || (opts.failFast && [repro, ...regression].some((r) => r.failed > 0))) break;
    regression.push(await runScenarioTrials(system, codeDir, name, runDir, { ...opts, trials: opts.regressionTrials ?? 2, onTrial: undefined }));
  }
  const verified = repro.failed === 0 && repro.trials.length === trials && regression.every((r) => r.failed === 0) && regression.length === bug.manifest.regression.length;
  const isolation = weakestIsolation([repro, ...regression].flatMap((r) => r.trials.map((t) => t.isolation)));
  return { ...repro, regression, verified, ...(isolation !== undefined && { isolation }) };
}

function readPatchFile(file: string): string {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read patch ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  if (!text.trim()) throw new UserError(`patch ${file}: the patch file is empty; put a unified diff in it (\`ddbench diff DIR > ${path.basename(file)}\` writes your workspace's changes)`);
  return text;
}

/** How messages name the patch being applied. */
function patchName(source: FixSource): string {
  return source.kind === 'patch' ? `patch ${source.file}` : source.kind === 'reference' ? "the bug's reference fix" : "the workspace's changes";
}

