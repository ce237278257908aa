import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runAgent, type AgentCollaborators, type AgentRunOptions } from '../agent/agent';
import { AgentSettings } from '../agent/config';
import { isConfigurationFailure, type AgentResult, type Attempt as AgentAttempt, type StopReason } from '../agent/events';
import { workspaceDiff } from '../verify/verify';
import { readTrajectory } from '../agent/trajectory';
import { loadCatalog } from '../bugs/catalog';
import { resolveWorkspace } from '../bugs/workspace';
import { wasInterrupted } from '../interrupt';
import { packageRoot } from '../paths';
import { patchStat } from './patch-metrics';
import { SCHEMA_VERSION, type AttemptRecord, type AttemptStatus, type EndpointKind, type Verification } from './schema';
import { appendRecords, ATTEMPTS_FILE, workspaceRecordsDir } from './store';

export interface RecordedRunOptions extends AgentRunOptions {
  /** Where the record is appended; default: the workspace's own records, beside people's attempts there. */
  recordsFile?: string;
  /** The bench job this run is. */
  bench?: { key: string; repeat: number };
  /** The study file the run belongs to (its hash). */
  studyHash?: string;
}

export interface RecordedRun {
  result: AgentResult;
  /**
   * None for a run that was stopped (a stop button, a bench winding down): that is no
   * attempt at the bug, so nothing is recorded (a bench runs it again on resume). A run
   * interrupted by a signal is recorded, with status 'interrupted', so it has an end.
   */
  record: AttemptRecord | undefined;
  /** Why nothing was recorded, when the run was no attempt at the bug: stopped by the user, or its settings were wrong. */
  notRecorded?: 'stopped' | 'configuration';
}

/**
 * Runs the agent on a bug workspace and appends the run to the study records, so it
 * compares with people's attempts: the one way `ddbench agent`, the editor's agent
 * panel and `ddbench bench` run it; they only present.
 */
export async function runAgentAndRecord(o: RecordedRunOptions, collaborators: Partial<AgentCollaborators> = {}): Promise<RecordedRun> {
  const catalog = collaborators.catalog ?? (await loadCatalog());
  const ws = await resolveWorkspace(o.workspace, catalog);
  const settings = AgentSettings.parse(o.settings);
  // Known before the run, so what the agent's copy started from is the workspace as it was.
  const fromEdits = settings.startFrom === 'workspace' && (await workspaceDiff(ws.info.dir, catalog)).trim() !== '';
  const result = await runAgent(o, { ...collaborators, catalog });
  if (result.stopReason === 'stopped' || (o.signal?.aborted && !wasInterrupted(o.signal))) return { result, record: undefined, notRecorded: 'stopped' };
  if (isConfigurationFailure(result)) return { result, record: undefined, notRecorded: 'configuration' };
  const record = agentAttemptRecord(result, {
    bug: { id: ws.bug.id, system: ws.bug.system, tier: ws.bug.tier },
    baseUrl: settings.baseUrl,
    startedFromEdits: fromEdits,
    toolVersion: ddbenchVersion(),
    ...(o.bench && { bench: o.bench }),
    ...(o.studyHash !== undefined && { studyHash: o.studyHash }),
  });
  appendRecords(o.recordsFile ?? path.join(workspaceRecordsDir(ws.info.dir), ATTEMPTS_FILE), [record]);
  return { result, record };
}

export interface AgentRecordContext {
  bug: { id: string; system: string; tier: 1 | 2 | 3 };
  /** The endpoint's base URL; only its kind and host are recorded. */
  baseUrl: string;
  toolVersion: string;
  bench?: { key: string; repeat: number };
  studyHash?: string;
  /** When the run started, if the trajectory cannot say (it was lost). */
  startedAt?: Date;
  /** The agent started from the person's edits rather than the bug's code. */
  startedFromEdits?: boolean;
  now?: () => Date;
}

/**
 * An agent run as a study record, so it compares with people's attempts field for field.
 * Start time and each verification's timing come from the run's trajectory when it is
 * there; the totals from the result.
 */
export function agentAttemptRecord(result: AgentResult, ctx: AgentRecordContext): AttemptRecord {
  const now = ctx.now ?? (() => new Date());
  const trajectory = readAttempts(result.trajectory);
  const started = trajectory.startedAt ?? ctx.startedAt ?? new Date(now().getTime() - result.totals.wallMs);
  const verifications = trajectory.attempts.map(({ t, attempt }) => verificationOfAgentAttempt(attempt, started, t));
  const firstPass = verifications.find((v) => v.verified);
  const status = statusOf(result.stopReason, result.verified);
  return {
    v: SCHEMA_VERSION,
    type: 'attempt',
    id: randomUUID(),
    revision: 0,
    hints: [],
    bug: ctx.bug,
    actor: { kind: 'agent', model: result.model, condition: result.condition, protocol: result.protocol, endpoint: endpointOf(ctx.baseUrl) },
    status,
    startedAt: started.toISOString(),
    endedAt: new Date(started.getTime() + result.totals.wallMs).toISOString(),
    verifications,
    attempts: result.attempts,
    ...(result.verified && { timeToFixMs: firstPass?.elapsedMs ?? result.totals.wallMs }),
    patch: result.patch === null ? null : { diff: result.patch, ...patchStat(result.patch) },
    agent: {
      steps: result.steps,
      promptTokens: result.totals.promptTokens,
      completionTokens: result.totals.completionTokens,
      tokens: result.totals.tokens,
      tokensEstimated: result.totals.tokensEstimated,
      costUsd: result.totals.costUsd,
      priced: result.totals.priced,
      stopReason: result.error ? `${result.stopReason}: ${result.error}` : result.stopReason,
      trajectory: result.trajectory,
    },
    ...(ctx.bench && { bench: ctx.bench }),
    ...(ctx.studyHash !== undefined && { studyHash: ctx.studyHash }),
    ...(ctx.startedFromEdits && { startedFromEdits: true }),
    tool: { name: 'ddbench', version: ctx.toolVersion },
  };
}

/** This package's version, recorded with every attempt it writes. */
export function ddbenchVersion(): string {
  const pkg: unknown = JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8'));
  return typeof pkg === 'object' && pkg !== null && 'version' in pkg && typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

/** Agents stop for many reasons; the record keeps the reason (agent.stopReason) and files the outcome under a status people share. */
function statusOf(reason: StopReason, verified: boolean): AttemptStatus {
  if (verified) return 'verified';
  switch (reason) {
    case 'error':
      return 'error';
    case 'time-limit':
      return 'timed-out';
    case 'stopped':
      return 'abandoned';
    case 'interrupted':
      return 'interrupted';
    default:
      return 'not-verified';
  }
}

/** Which kind of endpoint served the model, from its base URL (the host is kept; paths and keys never). */
export function endpointOf(baseUrl: string): { kind: EndpointKind; host: string } {
  let host: string;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return { kind: 'other', host: '' };
  }
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  const kind: EndpointKind =
    h === 'api.openai.com'
      ? 'openai'
      : h.endsWith('.openai.azure.com')
        ? 'azure'
        : h === 'localhost' || h === '::1' || /^127\./.test(h) || /^10\./.test(h) || /^192\.168\./.test(h) || /^172\.(1[6-9]|2\d|3[01])\./.test(h) || h.endsWith('.local')
          ? 'local'
          : 'other';
  return { kind, host: h };
}

function verificationOfAgentAttempt(a: AgentAttempt, started: Date, t: number): Verification {
  return {
    at: new Date(started.getTime() + t).toISOString(),
    elapsedMs: Math.max(0, t),
    verified: a.verified,
    patch: patchStat(a.patch),
    ...(a.reproducer && {
      reproducer: {
        scenario: a.reproducer.trials[0]?.scenario ?? 'reproducer',
        passed: a.reproducer.passed,
        total: a.reproducer.total,
        trials: a.reproducer.trials.map((x) => ({ seed: x.seed, verdict: verdictOf(x.verdict) })),
      },
    }),
    regression: a.regression.map((g) => ({ scenario: g.scenario, passed: g.passed, total: g.total })),
    ...(a.sim && {
      sim: {
        from: a.sim.from,
        seeds: a.sim.seeds,
        failed: a.sim.failed,
        required: a.sim.required,
        buggyFailureRate: a.sim.buggyFailureRate,
        ...(a.sim.firstFailingSeed !== undefined && { firstFailingSeed: a.sim.firstFailingSeed }),
      },
    }),
    ...(a.isolation !== undefined && { isolation: a.isolation }),
    ...(a.error !== undefined && { error: a.error }),
  };
}

function verdictOf(v: string): 'pass' | 'fail' | 'error' | 'timeout' {
  return v === 'pass' || v === 'fail' || v === 'timeout' ? v : 'error';
}

/** The run's start and its attempts with their times; empty when the trajectory is gone. */
function readAttempts(file: string): { startedAt?: Date; attempts: { t: number; attempt: AgentAttempt }[] } {
  if (!file || !fs.existsSync(file)) return { attempts: [] };
  const { records } = readTrajectory(file);
  const start = records.find((r) => r.type === 'start');
  const attempts = records.flatMap((r) => (r.type === 'attempt' ? [{ t: r.t, attempt: r.attempt }] : []));
  return { ...(start?.type === 'start' && { startedAt: new Date(start.time) }), attempts };
}
