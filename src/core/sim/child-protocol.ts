// What the harness and its sandboxed simulation child (child.ts) say to each other:
// one request on the child's stdin, then JSON lines from the child on fd 3. Both
// sides parse with these schemas, so neither trusts the other's bytes.
import { z } from 'zod';
import { SystemManifest } from '../bugs/manifest';
import { Event } from '../events/event';
import { JsonValue } from '../../runtime/wire';
import { SeedLimits } from './limits';
import { SimOptions } from './options';

/** The descriptor of the file the child writes its messages to (stdin, stdout, stderr, then this). */
export const CHILD_MESSAGE_FD = 3;

export const SimTrialResultSchema = z.strictObject({
  scenario: z.string(),
  seed: z.number().int(),
  verdict: z.enum(['pass', 'fail', 'error', 'timeout']),
  reason: z.string().optional(),
  violation: z.strictObject({ check: z.string(), details: z.record(z.string(), JsonValue) }).optional(),
  virtualMs: z.number(),
  events: z.number().int().nonnegative(),
  steps: z.number().int().nonnegative(),
  decisions: z.number().int().nonnegative(),
  durationMs: z.number(),
});

const Verdicts = z.strictObject({ pass: z.number().int(), fail: z.number().int(), error: z.number().int(), timeout: z.number().int() });

/** A seed search's result as the child gives it (the harness adds the isolation it ran under). */
export const SeedSearchSchema = z.strictObject({
  scenario: z.string(),
  from: z.number().int(),
  seedsRun: z.number().int().nonnegative(),
  failedSeeds: z.array(z.number().int()),
  firstFailingSeed: z.number().int().optional(),
  firstFailure: SimTrialResultSchema.optional(),
  verdicts: Verdicts,
  failureRate: z.number(),
  seedsPerSecond: z.number(),
  elapsedMs: z.number(),
  nondeterministicSeeds: z.array(z.number().int()),
});

export const DecisionSchema = z.strictObject({
  index: z.number().int().nonnegative(),
  kind: z.enum(['latency', 'timer-jitter', 'spawn-delay', 'drop', 'duplicate', 'reorder', 'fault-delay']),
  at: z.number(),
  subject: z.string(),
  value: z.number(),
  fallback: z.number(),
});

const RunSizeSchema = z.strictObject({ nonDefault: z.number().int(), decisions: z.number().int(), events: z.number().int(), virtualMs: z.number() });

export const ShrunkScheduleSchema = z.strictObject({
  seed: z.number().int(),
  keep: z.array(z.number().int().nonnegative()),
  kept: z.array(DecisionSchema),
  failure: z.string(),
  result: SimTrialResultSchema,
  original: RunSizeSchema,
  shrunk: RunSizeSchema,
  runs: z.number().int(),
  minimal: z.boolean(),
});

/** A replay's result; its events are in the file the child wrote. */
export const ReplayRunSchema = z.strictObject({
  result: SimTrialResultSchema,
  failedCheck: Event.optional(),
  lastEvents: z.array(Event),
  decisions: z.array(DecisionSchema),
});

const Target = z.strictObject({
  manifest: SystemManifest,
  /** The snapshot of the code (visible read-only). */
  srcRoot: z.string(),
  scenarioPath: z.string(),
});

export const ChildRequest = z.discriminatedUnion('op', [
  z.strictObject({
    op: z.literal('search'),
    target: Target,
    seeds: z.number().int().nonnegative(),
    from: z.number().int().optional(),
    stopAtFirstFailure: z.boolean().optional(),
    checkDeterminism: z.boolean().optional(),
    sim: SimOptions.partial().optional(),
    concurrency: z.number().int().positive(),
    limits: SeedLimits.optional(),
  }),
  z.strictObject({
    op: z.literal('shrink'),
    target: Target,
    seed: z.number().int(),
    maxRuns: z.number().int().positive().optional(),
    sim: SimOptions.partial().optional(),
  }),
  z.strictObject({
    op: z.literal('replay'),
    target: Target,
    seed: z.number().int(),
    /** Where the child writes the events (inside its scratch folder). */
    eventsFile: z.string(),
    keep: z.array(z.number().int().nonnegative()).optional(),
    sim: SimOptions.partial().optional(),
  }),
]);
export type ChildRequest = z.infer<typeof ChildRequest>;

export const ChildMessage = z.discriminatedUnion('t', [
  /** The scenario loaded: its virtual budget sets the wall limits. */
  z.strictObject({ t: z.literal('ready'), timeoutMs: z.number().int().positive() }),
  z.strictObject({ t: z.literal('seed'), result: SimTrialResultSchema, nondeterministic: z.boolean(), done: z.number().int(), total: z.number().int() }),
  z.strictObject({ t: z.literal('shrink-run'), runs: z.number().int(), kept: z.number().int() }),
  z.strictObject({ t: z.literal('done'), value: z.unknown() }),
  /** `user`: a UserError (a bad system or scenario), shown as it is. */
  z.strictObject({ t: z.literal('error'), message: z.string(), user: z.boolean() }),
]);
export type ChildMessage = z.infer<typeof ChildMessage>;
