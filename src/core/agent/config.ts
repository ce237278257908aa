import { z } from 'zod';
import { Isolation } from '../sandbox/levels';
import { BACKENDS } from '../cluster/types';
import { UserError } from '../errors';
import { addSecret } from '../secrets';
import { PriceTable } from './pricing';

export const CONDITIONS = ['symptom-only', 'context-augmented'] as const;
export const Condition = z.enum(CONDITIONS);

/** `auto` starts with tool calling and falls back to the text protocol when the endpoint has none. */
export const Protocol = z.enum(['auto', 'tools', 'text']);
export type Protocol = z.infer<typeof Protocol>;

/**
 * The agent's defaults, in one table: the settings below, the CLI's options and their
 * help, the editor's agent panel and the bench all take theirs from here.
 */
export const AGENT_DEFAULTS = {
  baseUrl: 'https://api.openai.com/v1',
  /** Where the CLI takes a base URL from when none is given. */
  baseUrlEnv: 'OPENAI_BASE_URL',
  /** The environment variable holding the API key unless another is named. */
  apiKeyEnv: 'OPENAI_API_KEY',
  /** The panel's first suggestion; the CLI and the bench ask for a model. */
  model: 'gpt-4o',
  timeoutMs: 120_000,
  /** One reply's wall time and size (content, reasoning and tool calls), however it streams. */
  maxReplyMs: 10 * 60_000,
  maxReplyChars: 1_000_000,
  maxRetries: 4,
  protocol: 'auto',
  condition: 'symptom-only',
  evidenceBudgetTokens: 40_000,
  limits: {
    maxSteps: 40,
    maxAttempts: 3,
    maxTokens: 1_000_000,
    maxCostUsd: 2,
    maxWallMs: 30 * 60_000,
    /** mini-swe-agent's default. */
    maxFormatErrors: 3,
  },
} as const;

const D = AGENT_DEFAULTS.limits;
export const AgentLimits = z.strictObject({
  /** Model turns (one request each). */
  maxSteps: z.number().int().min(1).default(D.maxSteps),
  /** Submissions verified. */
  maxAttempts: z.number().int().min(1).default(D.maxAttempts),
  /** Prompt plus completion tokens over the run. */
  maxTokens: z.number().int().min(1).default(D.maxTokens),
  maxCostUsd: z.number().min(0).default(D.maxCostUsd),
  maxWallMs: z.number().int().min(1000).default(D.maxWallMs),
  /** Replies in a row with no usable action before the run gives up. */
  maxFormatErrors: z.number().int().min(1).default(D.maxFormatErrors),
});
export type AgentLimits = z.infer<typeof AgentLimits>;

/** Everything a run needs except the API key, which is passed apart so it is never serialised with these. */
export const AgentSettings = z.strictObject({
  baseUrl: z.url().default(AGENT_DEFAULTS.baseUrl),
  model: z.string().min(1),
  temperature: z.number().min(0).max(2).optional(),
  timeoutMs: z.number().int().min(100).default(AGENT_DEFAULTS.timeoutMs),
  maxReplyMs: z.number().int().min(100).default(AGENT_DEFAULTS.maxReplyMs),
  maxReplyChars: z.number().int().min(1000).default(AGENT_DEFAULTS.maxReplyChars),
  maxRetries: z.number().int().min(0).max(10).default(AGENT_DEFAULTS.maxRetries),
  protocol: Protocol.default(AGENT_DEFAULTS.protocol),
  condition: Condition.default(AGENT_DEFAULTS.condition),
  limits: AgentLimits.default(AgentLimits.parse({})),
  /** Live trials per verification (default: the bug's own count). */
  trials: z.number().int().min(1).optional(),
  /** What the agent's copy starts from: the bug's code as opened, or the workspace's current edits. */
  startFrom: z.enum(['bug', 'workspace']).default('bug'),
  regressionTrials: z.number().int().min(1).optional(),
  /** Where verification and evidence trials run: processes, or a container per node. */
  backend: z.enum(BACKENDS).default('process'),
  /** The docker backend's node image (default: one built from this machine's Node.js). */
  dockerImage: z.string().min(1).optional(),
  /** Verifications refuse to run under weaker isolation than this (sandbox/isolation.ts). */
  requireIsolation: Isolation.optional(),
  /** Tokens of evidence-like content (the context bundle and every evidence tool's output) per run. */
  evidenceBudgetTokens: z.number().int().min(1000).default(AGENT_DEFAULTS.evidenceBudgetTokens),
  prices: PriceTable.optional(),
});
export type AgentSettings = z.infer<typeof AgentSettings>;
export type AgentSettingsInput = z.input<typeof AgentSettings>;

export interface Endpoint {
  baseUrl: string;
  apiKey: string | undefined;
  /** The variable the key was looked for in. */
  apiKeyEnv: string;
}

/**
 * The endpoint of a command-line run: the base URL given, else $OPENAI_BASE_URL, else
 * OpenAI's; the key from the environment only, so it is never in a shell history, a
 * record or a trajectory. A variable named on purpose must be set.
 */
export function endpointFromEnv(o: { baseUrl?: string; apiKeyEnv?: string }, env: NodeJS.ProcessEnv = process.env): Endpoint {
  const apiKeyEnv = o.apiKeyEnv ?? AGENT_DEFAULTS.apiKeyEnv;
  const apiKey = env[apiKeyEnv] || undefined;
  addSecret(apiKey);
  if (o.apiKeyEnv && !apiKey) throw new UserError(`--api-key-env ${o.apiKeyEnv}: that environment variable is not set`);
  return { baseUrl: o.baseUrl ?? env[AGENT_DEFAULTS.baseUrlEnv] ?? AGENT_DEFAULTS.baseUrl, apiKey, apiKeyEnv };
}
