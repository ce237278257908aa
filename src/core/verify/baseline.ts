import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { bugPatchText, materialiseBuggySource, type ResolvedWorkspace } from '../bugs/workspace';
import { DDBENCH_DIR } from '../paths';
import { runScenarioTrials } from '../repro/trials';
import { failedChecks } from './checks';
import { simulate } from './simulate';
import { withScratch } from './scratch';

/** Seeds of the bug's own code searched for its failing check. */
const BASELINE_SEEDS = 200;
/** Live trials of a real upstream system's buggy code, which has no simulation. */
const BASELINE_LIVE_TRIALS = 2;

const Baseline = z.strictObject({ v: z.literal(1), bugPatchSha256: z.string(), checks: z.array(z.string()) });

/**
 * The checks the reproducer fails on the bug's own code, so a result on changed code can
 * say when a different check fails ("your change moved the failure"). Measured once in
 * simulation (a real upstream system: in two live trials) on a pristine copy and kept in the workspace's `.ddbench/`, keyed by the
 * bug's patch so a changed bug is measured again.
 */
export async function buggyCodeChecks(ws: ResolvedWorkspace, signal?: AbortSignal): Promise<string[]> {
  const file = path.join(ws.info.dir, DDBENCH_DIR, 'buggy-checks.json');
  const sha = createHash('sha256').update(bugPatchText(ws.bug)).digest('hex');
  try {
    const known = Baseline.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
    if (known.bugPatchSha256 === sha) return known.checks;
  } catch {
    // Absent or unreadable: measure again.
  }
  const scenario = ws.bug.manifest.reproducer.scenario;
  const checks = await withScratch(async (dir) => {
    materialiseBuggySource(ws.system, ws.bug, dir);
    if (ws.system.manifest.upstream !== undefined) {
      const live = await runScenarioTrials(ws.system, dir, scenario, path.join(dir, '.baseline-runs'), { trials: BASELINE_LIVE_TRIALS, concurrency: 1, signal });
      return failedChecks([live]).map((c) => c.check);
    }
    const summary = await simulate(ws.system, dir, scenario, { seeds: BASELINE_SEEDS, stopAtFirstFailure: true, signal });
    return failedChecks([], [summary]).map((c) => c.check);
  });
  if (!signal?.aborted) fs.writeFileSync(file, JSON.stringify({ v: 1, bugPatchSha256: sha, checks }) + '\n');
  return checks;
}
