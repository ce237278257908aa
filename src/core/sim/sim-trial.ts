import { performance } from 'node:perf_hooks';
import { clusterContext } from '../scenario/context';
import { classify, type TrialResult, type Verdict } from '../scenario/verdict';
import type { SimOptionsInput } from './options';
import { SimCluster, type DriveResult } from './sim-cluster';
import type { SimTarget } from './target';

/** The verdict of one simulated run, with what it cost. */
export interface SimTrialResult {
  scenario: string;
  seed: number;
  verdict: Verdict;
  /** Why it did not pass, in one line. */
  reason?: string;
  violation?: TrialResult['violation'];
  /** Virtual ms from the start of the run to its verdict. */
  virtualMs: number;
  events: number;
  steps: number;
  /** Scheduler draws the run made. */
  decisions: number;
  /** Real ms the run took (never part of its events). */
  durationMs: number;
}

export interface SimRunSpec {
  seed: number;
  sim?: SimOptionsInput;
  /** Which scheduler draws keep their seeded value (shrinking); all by default. */
  keep?: ReadonlySet<number>;
  record?: boolean;
  runDir?: string;
}

/** A finished run: its verdict and its cluster, whose events and decisions stay readable. */
export interface SimRun {
  result: SimTrialResult;
  cluster: SimCluster;
}

type Outcome = Pick<SimTrialResult, 'verdict' | 'reason' | 'violation'>;

function judge(run: DriveResult<void>, timeoutMs: number, maxSteps: number): Outcome {
  switch (run.end) {
    case 'done':
      return { verdict: 'pass' };
    case 'failed':
      return classify(run.error);
    case 'deadline':
      return { verdict: 'timeout', reason: `scenario did not finish within ${timeoutMs} ms of virtual time` };
    case 'idle':
      // Nothing is scheduled, so nothing can ever resolve what the scenario awaits; live, it would time out.
      return { verdict: 'timeout', reason: 'scenario waits for something that can never happen: nothing is left to run in the simulation' };
    case 'step-limit':
      return { verdict: 'error', reason: `simulation stopped after ${maxSteps} steps: something reschedules itself without letting virtual time pass` };
    case 'stopped':
      return { verdict: 'error', reason: 'the simulated cluster was stopped during the scenario' };
  }
}

/**
 * One seeded run of a scenario on a fresh simulated cluster: the live trial's flow
 * (same context, checks and verdicts) with the scenario's budget on virtual time.
 */
export async function runSimTrial(target: SimTarget, spec: SimRunSpec): Promise<SimRun> {
  const started = performance.now();
  const { scenario } = target;
  const cluster = new SimCluster({
    system: target.system,
    sourceDir: target.srcRoot,
    nodes: target.nodes,
    config: target.config,
    seed: spec.seed,
    sim: spec.sim,
    keep: spec.keep,
    record: spec.record,
    runDir: spec.runDir,
  });
  let ctx: ReturnType<typeof clusterContext> | undefined;
  let outcome: Outcome;
  try {
    await cluster.start();
    ctx = clusterContext(cluster, spec.seed, target.nodes, cluster.clock);
    const run = await cluster.drive(ctx.supervise(scenario.run(ctx)), scenario.timeoutMs);
    outcome = judge(run, scenario.timeoutMs, cluster.options.maxSteps);
  } catch (err) {
    outcome = classify(err);
  }
  if (outcome.verdict === 'pass') cluster.emit({ node: 'harness', kind: 'check', level: 'info', msg: 'trial passed', fields: { ok: true } });
  else cluster.emit({ node: 'harness', kind: 'check', level: 'error', msg: `trial ${outcome.verdict}`, fields: { ok: false, reason: outcome.reason ?? '' } });
  const virtualMs = cluster.now() / 1000;
  ctx?.dispose();
  await cluster.stop();
  const result: SimTrialResult = {
    scenario: scenario.name,
    seed: spec.seed,
    ...outcome,
    virtualMs,
    events: cluster.events().length,
    steps: cluster.steps,
    decisions: cluster.decisionCount,
    durationMs: performance.now() - started,
  };
  return { result, cluster };
}
