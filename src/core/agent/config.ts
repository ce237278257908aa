import { z } from 'zod';
import { BACKENDS } from '../cluster/types';
import { PriceTable } from './pricing';

export const CONDITIONS = ['symptom-only', 'context-augmented'] as const;
export const Condition = z.enum(CONDITIONS);

/** `auto` starts with tool calling and falls back to the text protocol when the endpoint has none. */
export const Protocol = z.enum(['auto', 'tools', 'text']);
export type Protocol = z.infer<typeof Protocol>;

export const AgentLimits = z.strictObject({
  /** Model turns (one request each). */
  maxSteps: z.number().int().min(1).default(40),
  /** Submissions verified. */
  maxAttempts: z.number().int().min(1).default(3),
  /** Prompt plus completion tokens over the run. */
  maxTokens: z.number().int().min(1).default(1_000_000),
  maxCostUsd: z.number().min(0).default(2),
  maxWallMs: z.number().int().min(1000).default(30 * 60_000),
  /** Replies in a row with no usable action before the run gives up (mini-swe-agent's default). */
  maxFormatErrors: z.number().int().min(1).default(3),
});
export type AgentLimits = z.infer<typeof AgentLimits>;

/** Everything a run needs except the API key, which is passed apart so it is never serialised with these. */
export const AgentSettings = z.strictObject({
  baseUrl: z.url().default('https://api.openai.com/v1'),
  model: z.string().min(1),
  temperature: z.number().min(0).max(2).optional(),
  timeoutMs: z.number().int().min(100).default(120_000),
  maxRetries: z.number().int().min(0).max(10).default(4),
  protocol: Protocol.default('auto'),
  condition: Condition.default('symptom-only'),
  limits: AgentLimits.default(AgentLimits.parse({})),
  /** Live trials per verification (default: the bug's own count). */
  trials: z.number().int().min(1).optional(),
  regressionTrials: z.number().int().min(1).optional(),
  /** Where verification and evidence trials run: processes, or a container per node. */
  backend: z.enum(BACKENDS).default('process'),
  /** The docker backend's node image (default: one built from this machine's Node.js). */
  dockerImage: z.string().min(1).optional(),
  /** Tokens of evidence-like content (the context bundle and every evidence tool's output) per run. */
  evidenceBudgetTokens: z.number().int().min(1000).default(40_000),
  prices: PriceTable.optional(),
});
export type AgentSettings = z.infer<typeof AgentSettings>;
export type AgentSettingsInput = z.input<typeof AgentSettings>;
