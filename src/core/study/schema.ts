import { z } from 'zod';
import { Isolation } from '../sandbox/levels';

/**
 * The study record schema, current version. One schema for every attempt, by a person
 * or an agent, so both are compared on the same fields. A records file is JSONL; each
 * line is an attempt snapshot or an interaction event, and each carries `v`, the schema
 * version it was written with (readers upgrade older ones, see versions.ts).
 *
 * An attempt is written more than once as it goes (a snapshot at start, after each
 * verification, at the end), each time with a higher `revision`; the highest revision
 * of an id is the attempt's state. So a crash loses at most the step in progress.
 */
export const SCHEMA_VERSION = 2;

const Iso = z.iso.datetime({ offset: true });
const Count = z.number().int().min(0);

/**
 * A participant code: pseudonymous, never a name. The schema only rules out what cannot
 * be a code (spaces, punctuation, no digit); a study narrows it with its own pattern.
 */
export const ParticipantCode = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{1,31}$/, 'letters, digits, "-" and "_" only (2-32 characters)')
  .refine((s) => /\d/.test(s), 'a participant code has at least one digit (a code, not a name)');

export const Condition = z.enum(['symptom-only', 'context-augmented']);
export type Condition = z.infer<typeof Condition>;

export const TrialVerdict = z.enum(['pass', 'fail', 'error', 'timeout']);

/** One reproducer or regression scenario's live trials in a verification. */
export const CheckRun = z.strictObject({
  scenario: z.string(),
  passed: Count,
  total: Count,
  trials: z.array(z.strictObject({ seed: z.number().int(), verdict: TrialVerdict })).optional(),
});
export type CheckRun = z.infer<typeof CheckRun>;

/** The simulated seeds of a verification: the buggy code's measured failure rate and the fix's run. */
export const SimRun = z.strictObject({
  from: z.number().int(),
  seeds: Count,
  failed: Count,
  required: Count.optional(),
  buggyFailureRate: z.number().min(0).max(1).optional(),
  firstFailingSeed: z.number().int().optional(),
});
export type SimRun = z.infer<typeof SimRun>;

export const PatchSize = z.strictObject({ files: z.array(z.string()), added: Count, removed: Count });

/** One submitted fix, checked like any other: live trials, regression checks, simulated seeds. */
export const Verification = z.strictObject({
  at: Iso,
  /** Since the attempt started. */
  elapsedMs: Count,
  verified: z.boolean(),
  patch: PatchSize,
  reproducer: CheckRun.optional(),
  regression: z.array(CheckRun).default([]),
  sim: SimRun.optional(),
  /** The weakest isolation any of its runs had (absent in records from before the sandbox). */
  isolation: Isolation.optional(),
  /** The patch could not be checked at all (did not apply, verification broke). */
  error: z.string().optional(),
  /** The checks that failed, each once (absent in records from before they were kept). */
  failing: z.array(z.strictObject({ scenario: z.string(), check: z.string(), summary: z.string(), moved: z.boolean() })).optional(),
});
export type Verification = z.infer<typeof Verification>;

export const Patch = PatchSize.extend({ diff: z.string() });
export type Patch = z.infer<typeof Patch>;

export const HumanActor = z.strictObject({
  kind: z.literal('human'),
  participant: ParticipantCode,
  /** The study's label (a setting), so one folder can hold several studies. */
  study: z.string().max(100).optional(),
  /** Absent only in records upgraded from v1, which did not record it. */
  consent: z
    .strictObject({
      at: Iso,
      /** SHA-256 of the consent text shown, so the exact wording agreed to is on record. */
      textSha256: z.string().regex(/^[0-9a-f]{64}$/),
      interactionLog: z.boolean(),
    })
    .optional(),
  /** Whether the study let the person use the agent panel. */
  agentAllowed: z.boolean().default(false),
  /** Whether the study let the person take hints from the bug's hint ladder. */
  hintsAllowed: z.boolean().default(false),
});
export type HumanActor = z.infer<typeof HumanActor>;

export const EndpointKind = z.enum(['openai', 'azure', 'local', 'other']);
export type EndpointKind = z.infer<typeof EndpointKind>;

export const AgentActor = z.strictObject({
  kind: z.literal('agent'),
  model: z.string().min(1),
  condition: Condition,
  /** Which action protocol ran (absent only in records upgraded from v1). */
  protocol: z.enum(['tools', 'text']).optional(),
  endpoint: z.strictObject({ kind: EndpointKind, host: z.string() }).optional(),
});
export type AgentActor = z.infer<typeof AgentActor>;

export const Actor = z.discriminatedUnion('kind', [HumanActor, AgentActor]);
export type Actor = z.infer<typeof Actor>;

export const AttemptStatus = z.enum([
  'in-progress',
  'verified',
  /** Ended without a verified fix (an agent out of steps or attempts; a person's last submission failed). */
  'not-verified',
  'gave-up',
  'timed-out',
  /** Found in progress after its editor went away for longer than its time limit. */
  'abandoned',
  /** An agent run the user interrupted (Ctrl-C, SIGTERM); like an error, not a judgement of the actor. */
  'interrupted',
  /** The run itself broke (endpoint, workspace); not a judgement of the actor. */
  'error',
]);
export type AttemptStatus = z.infer<typeof AttemptStatus>;

export const AgentUsage = z.strictObject({
  steps: Count,
  promptTokens: Count,
  completionTokens: Count,
  tokens: Count,
  tokensEstimated: z.boolean(),
  costUsd: z.number().min(0),
  priced: z.boolean(),
  stopReason: z.string(),
  trajectory: z.string().optional(),
});
export type AgentUsage = z.infer<typeof AgentUsage>;

/** A batch run's place in its plan; `key` is what resuming skips on. */
export const BenchKey = z.strictObject({ key: z.string().min(1), repeat: Count });

export const AttemptRecord = z.strictObject({
  v: z.literal(SCHEMA_VERSION),
  type: z.literal('attempt'),
  /** Stable across machines and merges (a UUID made when the attempt starts). */
  id: z.string().min(8).max(64),
  revision: Count,
  bug: z.strictObject({
    id: z.string().min(1),
    /** Absent only in records upgraded from v1 (the report looks them up in the bug set). */
    system: z.string().optional(),
    tier: z.union([z.literal(1), z.literal(2), z.literal(3)]).optional(),
  }),
  actor: Actor,
  status: AttemptStatus,
  startedAt: Iso,
  endedAt: Iso.optional(),
  timeLimitMs: Count.optional(),
  verifications: z.array(Verification).default([]),
  /** Fixes submitted for verification (agents also count those that failed to apply). */
  attempts: Count,
  /** From the start to the first verified fix. */
  timeToFixMs: Count.optional(),
  /** The final patch (the verified one, else the last), as a unified diff against the bug's code. */
  patch: Patch.nullable(),
  agent: AgentUsage.optional(),
  bench: BenchKey.optional(),
  /** The study file this run belongs to (study-file.ts's studyHash), when it was run from one. */
  studyHash: z.string().regex(/^[0-9a-f]{16}$/).optional(),
  /** Hints taken from the bug's ladder during the attempt, in order (level 1 is the first hint). */
  hints: z.array(z.strictObject({ level: z.number().int().min(1), at: Iso, elapsedMs: Count })).default([]),
  /** The workspace already differed from the bug's code when the attempt started (work before the clock). */
  startedFromEdits: z.boolean().optional(),
  tool: z.strictObject({ name: z.literal('ddbench'), version: z.string() }).optional(),
});
export type AttemptRecord = z.infer<typeof AttemptRecord>;

/** What a person did during an attempt: sizes and names, never file contents. */
export const Interaction = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('file-open'), path: z.string() }),
  /** Edits to one file over a few seconds, summed: characters inserted and deleted, and how many changes. */
  z.strictObject({ kind: z.literal('edit'), path: z.string(), inserted: Count, deleted: Count, changes: Count }),
  /** A DDBench command (reproducer, cluster, timeline, agent panel, ...), by name. */
  z.strictObject({ kind: z.literal('command'), command: z.string() }),
  z.strictObject({ kind: z.literal('debug'), action: z.enum(['start', 'stop']), name: z.string() }),
  z.strictObject({ kind: z.literal('submit'), verified: z.boolean() }),
  /** A command the study does not allow during an attempt (the agent panel, a hint), refused. */
  z.strictObject({ kind: z.literal('refused'), command: z.string() }),
  /** A hint taken from the bug's ladder (its level, never its text). */
  z.strictObject({ kind: z.literal('hint'), level: z.number().int().min(1) }),
]);
export type Interaction = z.infer<typeof Interaction>;

export const InteractionRecord = z.strictObject({
  v: z.literal(SCHEMA_VERSION),
  type: z.literal('interaction'),
  attemptId: z.string().min(8).max(64),
  /** Per attempt, from 0; with attemptId, the event's identity in merges. */
  seq: Count,
  at: Iso,
  elapsedMs: Count,
  event: Interaction,
});
export type InteractionRecord = z.infer<typeof InteractionRecord>;

export const StudyLine = z.discriminatedUnion('type', [AttemptRecord, InteractionRecord]);
export type StudyLine = z.infer<typeof StudyLine>;
