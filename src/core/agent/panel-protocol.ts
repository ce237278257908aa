/**
 * Messages between the agent panel's webview and the extension host, checked with
 * zod on both ends. The webview says `ready` first; the host answers with `init`
 * (settings, key status and every event of the current run so far), then streams
 * events. No vscode import: the webview bundle includes this file.
 */
import { z } from 'zod';
import { AGENT_DEFAULTS, Condition, Protocol, type AgentSettingsInput } from './config';
import { AgentEvent } from './events';

export const PROTOCOL_VERSION = 1;

/** What the panel's form edits; persisted by the host (never the key). */
export const PanelSettings = z.object({
  baseUrl: z.url(),
  model: z.string().trim().min(1),
  /** The environment variable consulted when no key is stored. */
  apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name: letters, digits and _'),
  condition: Condition,
  protocol: Protocol,
  temperature: z.number().min(0).max(2).nullable(),
  maxSteps: z.number().int().min(1).max(1000),
  maxAttempts: z.number().int().min(1).max(50),
  maxCostUsd: z.number().min(0),
  maxMinutes: z.number().min(1).max(24 * 60),
  /** Live trials per verification; null: the bug's own count. */
  trials: z.number().int().min(1).max(1000).nullable(),
  /** What the agent's copy starts from: the bug's code, or the workspace's current edits. */
  startFrom: z.enum(['bug', 'workspace']).default('bug'),
});
export type PanelSettings = z.infer<typeof PanelSettings>;

export const DEFAULT_PANEL_SETTINGS: PanelSettings = {
  baseUrl: AGENT_DEFAULTS.baseUrl,
  model: AGENT_DEFAULTS.model,
  apiKeyEnv: AGENT_DEFAULTS.apiKeyEnv,
  condition: AGENT_DEFAULTS.condition,
  protocol: AGENT_DEFAULTS.protocol,
  temperature: null,
  maxSteps: AGENT_DEFAULTS.limits.maxSteps,
  maxAttempts: AGENT_DEFAULTS.limits.maxAttempts,
  maxCostUsd: AGENT_DEFAULTS.limits.maxCostUsd,
  maxMinutes: AGENT_DEFAULTS.limits.maxWallMs / 60_000,
  trials: null,
  startFrom: 'bug',
};

export function agentSettingsOf(p: PanelSettings): AgentSettingsInput {
  return {
    baseUrl: p.baseUrl,
    model: p.model,
    condition: p.condition,
    protocol: p.protocol,
    ...(p.temperature !== null && { temperature: p.temperature }),
    ...(p.trials !== null && { trials: p.trials }),
    startFrom: p.startFrom,
    limits: { maxSteps: p.maxSteps, maxAttempts: p.maxAttempts, maxCostUsd: p.maxCostUsd, maxWallMs: Math.round(p.maxMinutes * 60_000) },
  };
}

/** Where the key for the next run comes from, said so the person knows (and never the key itself). */
export const KeyStatus = z.object({
  source: z.enum(['secret-storage', 'session', 'env', 'none']),
  message: z.string(),
});
export type KeyStatus = z.infer<typeof KeyStatus>;

export const Review = z.object({ attempt: z.number().int(), decision: z.enum(['accepted', 'rejected']), edited: z.boolean() });
export type Review = z.infer<typeof Review>;

export const ToHost = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), protocol: z.number().int() }),
  z.object({ type: z.literal('saveSettings'), settings: PanelSettings }),
  z.object({ type: z.literal('setKey'), key: z.string().trim().min(1) }),
  z.object({ type: z.literal('clearKey') }),
  z.object({ type: z.literal('start'), settings: PanelSettings }),
  z.object({ type: z.literal('stop') }),
  z.object({ type: z.literal('showDiff'), attempt: z.number().int() }),
  z.object({ type: z.literal('accept'), attempt: z.number().int() }),
  z.object({ type: z.literal('reject'), attempt: z.number().int() }),
  z.object({ type: z.literal('openTrajectory') }),
  z.object({ type: z.literal('testConnection'), settings: PanelSettings }),
]);
export type ToHost = z.infer<typeof ToHost>;

export const ToWebview = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('init'),
    protocol: z.number().int(),
    settings: PanelSettings,
    key: KeyStatus,
    /** The bug workspace the agent works on, if the window has one, with the files the person changed. */
    workspace: z.object({ bugId: z.string(), dir: z.string(), edits: z.array(z.string()).default([]) }).nullable(),
    running: z.boolean(),
    events: z.array(AgentEvent),
    reviews: z.array(Review),
  }),
  z.object({ type: z.literal('event'), event: AgentEvent }),
  z.object({ type: z.literal('running'), running: z.boolean() }),
  z.object({ type: z.literal('key'), key: KeyStatus }),
  z.object({ type: z.literal('review'), review: Review }),
  z.object({ type: z.literal('error'), message: z.string() }),
  /** Test Connection's answer. */
  z.object({ type: z.literal('connection'), ok: z.boolean(), message: z.string() }),
]);
export type ToWebview = z.infer<typeof ToWebview>;

/** The webview's own persisted UI state (which rows are open); small and versioned. */
export const UiState = z.object({ version: z.literal(1), open: z.array(z.string()).max(500), settingsOpen: z.boolean() });
export type UiState = z.infer<typeof UiState>;
export const DEFAULT_UI_STATE: UiState = { version: 1, open: [], settingsOpen: true };
