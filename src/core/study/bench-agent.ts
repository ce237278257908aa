import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AgentCollaborators } from '../agent/agent';
import type { AgentSettingsInput, Protocol } from '../agent/config';
import type { Catalog } from '../bugs/catalog';
import { openWorkspace } from '../bugs/workspace';
import { runAgentAndRecord } from './agent';
import type { BenchJob } from './bench';
import type { AttemptRecord } from './schema';

export interface AgentJobOptions {
  catalog: Catalog;
  /** The batch's folder: each run's workspace goes under runs/. */
  outDir: string;
  /** This process's records file (one per shard, so shards never share a file). */
  recordsFile: string;
  /** Each model's endpoint (a study may put models behind different ones). */
  endpoint: (model: string) => { baseUrl: string; apiKey?: string; protocol?: Protocol };
  /** The study file the batch runs, stamped on every record. */
  studyHash?: string;
  /** Everything but what each job sets (model, condition, endpoint). */
  settings: Omit<AgentSettingsInput, 'model' | 'condition' | 'baseUrl'>;
  /** The agent's collaborators but the catalogue (a test's fakes); default: the real ones. */
  collaborators?: Partial<Omit<AgentCollaborators, 'catalog'>>;
}

/** Where a job's workspace lives: one folder per run, so runs share nothing. */
export function jobDir(outDir: string, job: BenchJob): string {
  return path.join(outDir, 'runs', slug(job.bugId), slug(job.model), job.condition, `r${job.repeat}`);
}

/**
 * Runs and records one bench job with the agent harness, isolated: a fresh workspace of
 * the bug (a leftover from an interrupted run is replaced), the agent's own scratch copy,
 * and its own trial clusters and ports. An interrupted run returns undefined and records
 * nothing, so resuming runs it again from scratch.
 */
export function agentJobRunner(o: AgentJobOptions): (job: BenchJob, signal: AbortSignal) => Promise<AttemptRecord | undefined> {
  return async (job, signal) => {
    const dir = jobDir(o.outDir, job);
    fs.rmSync(dir, { recursive: true, force: true });
    await openWorkspace(o.catalog, job.bugId, dir);
    const { baseUrl, apiKey, protocol } = o.endpoint(job.model);
    const { record } = await runAgentAndRecord(
      {
        workspace: dir,
        settings: { ...o.settings, ...(protocol !== undefined && { protocol }), baseUrl, model: job.model, condition: job.condition },
        ...(apiKey !== undefined && { apiKey }),
        signal,
        recordsFile: o.recordsFile,
        bench: { key: job.key, repeat: job.repeat },
        ...(o.studyHash !== undefined && { studyHash: o.studyHash }),
      },
      { ...o.collaborators, catalog: o.catalog },
    );
    return record;
  };
}

/** A path-safe, collision-free folder name for a model or bug name ("meta-llama/Llama-3:8b"). */
function slug(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60);
  return safe === name ? safe : `${safe}-${createHash('sha256').update(name).digest('hex').slice(0, 8)}`;
}
