import * as fs from 'node:fs';
import * as path from 'node:path';
import { createCluster, type BackendOptions } from '../cluster';
import type { Json } from '../../runtime/types';
import type { SystemEntry } from '../bugs/catalog';
import { scenarioFile } from '../bugs/catalog';
import { backendFor } from './backend';
import { clusterContext, ProgressTimeout } from './context';
import { InvariantViolation } from './scenario';
import { loadScenario } from './scenario-loader';
import { STATE_FILE, writeStateSnapshot } from './state-snapshot';

/** The seed of a run or of the first trial when none is given. */
export const DEFAULT_SEED = 1;

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
}

export interface TrialSpec {
  index: number;
  system: SystemEntry;
  /** Folder holding the system's code to run (a workspace or a scratch copy). */
  sourceDir: string;
  scenario: string;
  seed: number;
  runDir: string;
  signal?: AbortSignal;
  /** Write each node's state at the end of the trial (before the cluster stops) to state.json. */
  captureState?: boolean;
  /** Where the nodes run (default: processes). */
  backend?: BackendOptions;
}

/**
 * Runs one seeded trial of a scenario on a fresh live cluster and gives its verdict:
 * `fail` when an invariant or a progress expectation is violated, `timeout` past the
 * scenario's budget, `error` when the harness or the scenario itself broke.
 */
export async function runTrial(spec: TrialSpec): Promise<TrialResult> {
  const started = Date.now();
  fs.mkdirSync(spec.runDir, { recursive: true });
  const eventsFile = path.join(spec.runDir, 'events.jsonl');
  const base = { index: spec.index, scenario: spec.scenario, seed: spec.seed, eventsFile };
  let result: TrialResult;
  let cluster: ReturnType<typeof createCluster> | undefined;
  let ctx: ReturnType<typeof clusterContext> | undefined;
  try {
    const scenario = await loadScenario(scenarioFile(spec.system, spec.scenario));
    const m = spec.system.manifest;
    cluster = createCluster({
      sourceDir: spec.sourceDir,
      entry: m.entry,
      nodes: m.nodes,
      config: { ...m.config, ...(scenario.config as Record<string, Json> | undefined) },
      runDir: spec.runDir,
      seed: spec.seed,
    }, backendFor(spec.system, spec.backend));
    await cluster.start();
    ctx = clusterContext(cluster, spec.seed, m.nodes);
    await withTimeout(scenario.run(ctx), scenario.timeoutMs, spec.signal);
    cluster.emit({ node: 'harness', kind: 'check', level: 'info', msg: 'trial passed', fields: { ok: true } });
    result = { ...base, verdict: 'pass', durationMs: Date.now() - started };
  } catch (err) {
    result = { ...base, ...classify(err), durationMs: Date.now() - started };
    cluster?.emit({ node: 'harness', kind: 'check', level: 'error', msg: `trial ${result.verdict}`, fields: { ok: false, reason: result.reason ?? '' } });
  } finally {
    ctx?.dispose();
    if (spec.captureState && cluster) await writeStateSnapshot(cluster, spec.system.manifest.nodes, path.join(spec.runDir, STATE_FILE));
    await cluster?.stop();
  }
  fs.writeFileSync(path.join(spec.runDir, 'trial.json'), JSON.stringify(result, null, 2) + '\n');
  return result;
}

class TrialTimeout extends Error {}
class TrialAborted extends Error {}

/** The verdict an error from a trial stands for; the simulated trial uses it too. */
export function classify(err: unknown): Pick<TrialResult, 'verdict' | 'reason' | 'violation'> {
  if (err instanceof InvariantViolation) {
    return { verdict: 'fail', reason: err.message, violation: { check: err.check, details: err.details } };
  }
  if (err instanceof ProgressTimeout) {
    return { verdict: 'fail', reason: err.message, violation: { check: `progress: ${err.description}`, details: { timeoutMs: err.timeoutMs } } };
  }
  if (err instanceof TrialTimeout) return { verdict: 'timeout', reason: err.message };
  if (err instanceof TrialAborted) return { verdict: 'error', reason: 'cancelled' };
  return { verdict: 'error', reason: err instanceof Error ? err.message : String(err) };
}

function withTimeout(work: Promise<void>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TrialTimeout(`scenario did not finish within ${ms} ms`)), ms);
    const onAbort = () => reject(new TrialAborted('cancelled'));
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
  });
}
