import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runAgent } from '../agent/agent';
import type { AgentSettingsInput } from '../agent/config';
import { findBug, type Catalog } from '../bugs/catalog';
import { openWorkspace } from '../bugs/workspace';
import { agentAttemptRecord } from './agent';
import type { BenchJob } from './bench';
import type { AttemptRecord } from './schema';

export interface AgentJobOptions {
  catalog: Catalog;
  /** The batch's folder: each run's workspace goes under runs/. */
  outDir: string;
  baseUrl: string;
  apiKey?: string;
  /** Everything but what each job sets (model, condition, endpoint). */
  settings: Omit<AgentSettingsInput, 'model' | 'condition' | 'baseUrl'>;
  toolVersion: string;
}

/** Where a job's workspace lives: one folder per run, so runs share nothing. */
export function jobDir(outDir: string, job: BenchJob): string {
  return path.join(outDir, 'runs', slug(job.bugId), slug(job.model), job.condition, `r${job.repeat}`);
}

/**
 * Runs one bench job with the agent harness, isolated: a fresh workspace of the bug
 * (a leftover from an interrupted run is replaced), the agent's own scratch copy, and
 * its own trial clusters and ports. An interrupted run returns undefined and records
 * nothing, so resuming runs it again from scratch.
 */
export function agentJobRunner(o: AgentJobOptions): (job: BenchJob, signal: AbortSignal) => Promise<AttemptRecord | undefined> {
  return async (job, signal) => {
    const bug = findBug(o.catalog, job.bugId);
    const dir = jobDir(o.outDir, job);
    fs.rmSync(dir, { recursive: true, force: true });
    await openWorkspace(o.catalog, bug.id, dir);
    const result = await runAgent({
      workspace: dir,
      settings: { ...o.settings, baseUrl: o.baseUrl, model: job.model, condition: job.condition },
      ...(o.apiKey !== undefined && { apiKey: o.apiKey }),
      signal,
    });
    if (result.stopReason === 'stopped' || signal.aborted) return undefined;
    return agentAttemptRecord(result, {
      bug: { id: bug.id, system: bug.system, tier: bug.tier },
      baseUrl: o.baseUrl,
      toolVersion: o.toolVersion,
      bench: { key: job.key, repeat: job.repeat },
    });
  };
}

/** A path-safe, collision-free folder name for a model or bug name ("meta-llama/Llama-3:8b"). */
function slug(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60);
  return safe === name ? safe : `${safe}-${createHash('sha256').update(name).digest('hex').slice(0, 8)}`;
}
