import * as fs from 'node:fs';
import * as path from 'node:path';
import { createSystemCluster, type BackendOptions, type Cluster } from '../cluster';
import type { Json } from '../../runtime/types';
import type { SystemEntry } from '../bugs/catalog';
import { scenarioFile } from '../bugs/catalog';
import { redact } from '../secrets';
import { backendFor } from '../cluster/backend';
import { clusterContext } from '../scenario/context';
import { loadScenario } from '../scenario/loader';
import { classify, TrialAborted, TrialTimeout, type TrialResult } from '../scenario/verdict';
import { STATE_FILE, writeStateSnapshot } from './state-snapshot';

const NODE_CPU_MARGIN_S = 10;

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
  let cluster: Cluster | undefined;
  let ctx: ReturnType<typeof clusterContext> | undefined;
  try {
    const scenario = await loadScenario(scenarioFile(spec.system, spec.scenario));
    const m = spec.system.manifest;
    cluster = createSystemCluster(spec.system, {
      sourceDir: spec.sourceDir,
      nodes: m.nodes,
      config: { ...m.config, ...(scenario.config as Record<string, Json> | undefined) },
      runDir: spec.runDir,
      seed: spec.seed,
      // A node cannot use more CPU than the trial has time, with a margin for starting.
      cpuSeconds: Math.ceil(scenario.timeoutMs / 1000) + NODE_CPU_MARGIN_S,
    }, backendFor(spec.system, spec.backend));
    await cluster.start();
    ctx = clusterContext(cluster, spec.seed, m.nodes);
    await withTimeout(ctx.supervise(scenario.run(ctx)), scenario.timeoutMs, spec.signal);
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
  if (cluster?.isolation !== undefined) result = { ...result, isolation: cluster.isolation };
  fs.writeFileSync(path.join(spec.runDir, 'trial.json'), redact(JSON.stringify(result, null, 2)) + '\n');
  return result;
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
