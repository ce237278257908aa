import { z } from 'zod';
import { Condition } from './config';
import { Isolation } from '../sandbox/levels';

/**
 * What a run reports while it goes (the editor's transcript and the CLI's progress)
 * and what it ends with. zod schemas, because the editor passes these to a webview.
 */

export const StopReason = z.enum([
  'verified',
  'step-limit',
  'attempt-limit',
  'token-limit',
  'cost-limit',
  'time-limit',
  'format-errors',
  'stopped',
  /** Ctrl-C or SIGTERM on the harness (a stop button is 'stopped'). */
  'interrupted',
  'error',
]);
export type StopReason = z.infer<typeof StopReason>;

export const RanProtocol = z.enum(['tools', 'text']);
export type RanProtocol = z.infer<typeof RanProtocol>;

export const Totals = z.object({
  steps: z.number().int(),
  attempts: z.number().int(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  tokens: z.number().int(),
  /** Some replies came without usage, so part of the count is estimated. */
  tokensEstimated: z.boolean(),
  costUsd: z.number(),
  /** The model had a price in the table (else cost is 0). */
  priced: z.boolean(),
  evidenceTokens: z.number().int(),
  wallMs: z.number().int(),
});
export type Totals = z.infer<typeof Totals>;

export const TrialLine = z.object({ scenario: z.string(), index: z.number().int(), seed: z.number().int(), verdict: z.string(), reason: z.string().optional() });

/** One submitted patch and its verification. */
export const Attempt = z.object({
  attempt: z.number().int(),
  patch: z.string(),
  /** Each changed file's text in the agent's copy (null: deleted), for review in the diff editor. */
  files: z.array(z.object({ path: z.string(), after: z.string().nullable() })),
  verified: z.boolean(),
  /** One line: what passed and what failed. */
  summary: z.string(),
  reproducer: z.object({ passed: z.number().int(), total: z.number().int(), trials: z.array(TrialLine) }).optional(),
  regression: z.array(z.object({ scenario: z.string(), passed: z.number().int(), total: z.number().int() })),
  /** The simulated seeds: how many the fix had to pass, how many it ran and failed, the first failing one and why. */
  sim: z
    .object({
      from: z.number().int(),
      required: z.number().int(),
      seeds: z.number().int(),
      failed: z.number().int(),
      buggyFailureRate: z.number(),
      firstFailingSeed: z.number().int().optional(),
      reason: z.string().optional(),
    })
    .optional(),
  /** Why the patch could not be verified at all (it did not apply, or verification broke). */
  error: z.string().optional(),
  /** The weakest isolation the patched code ran under in this verification (absent in older trajectories). */
  isolation: Isolation.optional(),
  runDir: z.string().optional(),
  ms: z.number().int(),
});
export type Attempt = z.infer<typeof Attempt>;

export const AgentResult = z.object({
  bugId: z.string(),
  model: z.string(),
  condition: Condition,
  protocol: RanProtocol,
  verified: z.boolean(),
  stopReason: StopReason,
  /** Set when the run ended on an error (the endpoint failed, the workspace broke). */
  error: z.string().optional(),
  /** The endpoint's error kind (llm.ts LlmErrorKind) when the endpoint failed. */
  errorKind: z.string().optional(),
  attempts: z.number().int(),
  steps: z.number().int(),
  tokens: z.number().int(),
  totals: Totals,
  /** The verified patch, else the last submitted one, else null (unified diff against the bug's code). */
  patch: z.string().nullable(),
  trajectory: z.string(),
  runDir: z.string(),
});
export type AgentResult = z.infer<typeof AgentResult>;

export const StreamDelta = z.discriminatedUnion('kind', [
  z.object({ kind: z.enum(['text', 'reasoning']), text: z.string() }),
  z.object({ kind: z.literal('tool'), name: z.string() }),
]);

export type StreamDelta = z.infer<typeof StreamDelta>;

export const AgentEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('started'), bugId: z.string(), model: z.string(), condition: Condition, trajectory: z.string() }),
  z.object({ type: z.literal('context'), text: z.string() }),
  z.object({ type: z.literal('step'), step: z.number().int() }),
  z.object({ type: z.literal('delta'), step: z.number().int(), delta: StreamDelta }),
  z.object({ type: z.literal('reply'), step: z.number().int(), content: z.string() }),
  z.object({ type: z.literal('tool-start'), step: z.number().int(), id: z.string(), name: z.string(), args: z.string() }),
  z.object({ type: z.literal('tool-end'), step: z.number().int(), id: z.string(), name: z.string(), ok: z.boolean(), output: z.string(), ms: z.number().int() }),
  z.object({ type: z.literal('notice'), level: z.enum(['info', 'warn']), text: z.string() }),
  z.object({ type: z.literal('verifying'), attempt: z.number().int() }),
  z.object({ type: z.literal('attempt'), attempt: Attempt }),
  z.object({ type: z.literal('totals'), totals: Totals }),
  z.object({ type: z.literal('done'), result: AgentResult }),
]);
export type AgentEvent = z.infer<typeof AgentEvent>;

/** Why a run stopped, in words a person reads without knowing the harness. */
export function stopReasonText(reason: StopReason): string {
  switch (reason) {
    case 'verified':
      return 'a fix was verified';
    case 'step-limit':
      return 'it used every step it was allowed (the step limit)';
    case 'attempt-limit':
      return 'it submitted as many fixes as it was allowed, none verified (the attempt limit)';
    case 'token-limit':
      return 'it used every token it was allowed (the token limit)';
    case 'cost-limit':
      return 'it spent all the money it was allowed (the cost limit)';
    case 'time-limit':
      return 'it ran out of time (the time limit)';
    case 'format-errors':
      return "the model's replies could not be understood several times in a row (no tool call or action the harness could read)";
    case 'stopped':
      return 'you stopped it';
    case 'interrupted':
      return 'the run was interrupted (Ctrl-C or SIGTERM)';
    case 'error':
      return 'something went wrong';
  }
}

/** Endpoint errors that say the run's settings are wrong (URL, key, model), not how the agent did. */
const CONFIGURATION_ERRORS = new Set(['auth', 'model', 'endpoint', 'unreachable', 'refused']);

/**
 * A run that never got going because of its configuration (a wrong URL, key or model):
 * no attempt at the bug, so it is no study result and is not recorded.
 */
export function isConfigurationFailure(r: Pick<AgentResult, 'stopReason' | 'errorKind' | 'attempts'>): boolean {
  return r.stopReason === 'error' && r.errorKind !== undefined && CONFIGURATION_ERRORS.has(r.errorKind) && r.attempts === 0;
}
