import { Option } from 'commander';
import * as fs from 'node:fs';
import { z } from 'zod';
import { AGENT_DEFAULTS, AgentSettings, Condition, endpointFromEnv, Protocol, type AgentSettingsInput } from '../../core/agent/config';
import { stopReasonText, type AgentEvent } from '../../core/agent/events';
import { PriceTable } from '../../core/agent/pricing';
import { UserError } from '../../core/errors';
import { runAgentAndRecord } from '../../core/study/agent';
import { agentBackendOptions, isolationOptions, count, endpointOptions, limitOptions, number, optionGroup, options, outputOptions, trialOptions, type OptionsOf } from '../options';
import { EXIT, printJson, progress, say, withInterrupt } from '../output';
import { workspaceFor } from './up';

const D = AGENT_DEFAULTS.limits;

export const agentOptions = options(
  optionGroup([new Option('--model <name>', 'model name as the endpoint knows it (gpt-4o, qwen2.5-coder:32b, ...)').makeOptionMandatory()], z.object({ model: z.string() })),
  endpointOptions({
    baseUrl: `OpenAI-compatible endpoint (default: $${AGENT_DEFAULTS.baseUrlEnv} or ${AGENT_DEFAULTS.baseUrl})`,
    apiKeyEnv: `environment variable holding the API key (default: ${AGENT_DEFAULTS.apiKeyEnv})`,
  }),
  optionGroup(
    [
      new Option('--condition <c>', 'what the agent is given').choices(Condition.options).default(AGENT_DEFAULTS.condition),
      new Option('--protocol <p>', 'tool calling, the text-action protocol, or tools with a fallback to text').choices(Protocol.options).default(AGENT_DEFAULTS.protocol),
      new Option('--from-edits', "start the agent's copy from the workspace's current edits instead of the bug's code"),
    ],
    z.object({ condition: Condition, protocol: Protocol, fromEdits: z.boolean().default(false) }),
  ),
  limitOptions({
    maxSteps: `model turns (default ${D.maxSteps})`,
    maxAttempts: `submissions (default ${D.maxAttempts})`,
    maxTokens: `prompt + completion tokens (default ${D.maxTokens})`,
    maxCost: `US dollars, from the price table (default ${D.maxCostUsd})`,
    maxMinutes: `wall-clock time (default ${D.maxWallMs / 60_000})`,
  }),
  trialOptions({ trials: "live reproducer trials per verification (default: the bug's)" }),
  optionGroup(
    [
      new Option('--regression-trials <n>', 'trials of each regression check per verification (default 2)'),
      new Option('--temperature <t>', "sampling temperature (default: the endpoint's)"),
      new Option('--timeout <s>', `seconds without a byte from the endpoint before a request fails (default ${AGENT_DEFAULTS.timeoutMs / 1000})`),
      new Option('--evidence-budget <tokens>', `tokens of evidence (context bundle and evidence tools) per run (default ${AGENT_DEFAULTS.evidenceBudgetTokens})`),
      new Option('--prices <file>', 'JSON price table: {"model": {"input": USD/1M tokens, "output": ..., "cachedInput": ...}}'),
    ],
    z.object({
      regressionTrials: count('--regression-trials', 1).optional(),
      temperature: number('--temperature', 0).optional(),
      timeout: number('--timeout', 0.1).optional(),
      evidenceBudget: count('--evidence-budget', 1000).optional(),
      prices: z.string().optional(),
    }),
  ),
  outputOptions('machine-readable result (verified, attempts, steps, tokens, patch, trajectory, ...)'),
  // The agent's settings carry the backend and image; the limits come from system.json there.
  agentBackendOptions,
  isolationOptions,
);
export type AgentOpts = OptionsOf<typeof agentOptions>;

/** `ddbench agent`: the agent investigates, patches and submits until a patch is verified or a limit is reached. */
export async function commandAgent(target: string, o: AgentOpts): Promise<number> {
  const { baseUrl, apiKey, apiKeyEnv } = endpointFromEnv(o);
  const input: AgentSettingsInput = {
    model: o.model,
    baseUrl,
    condition: o.condition as AgentSettingsInput['condition'],
    protocol: o.protocol as AgentSettingsInput['protocol'],
    startFrom: o.fromEdits ? 'workspace' : 'bug',
    ...(o.temperature !== undefined && { temperature: o.temperature }),
    ...(o.timeout !== undefined && { timeoutMs: o.timeout * 1000 }),
    ...(o.trials !== undefined && { trials: o.trials }),
    ...(o.regressionTrials !== undefined && { regressionTrials: o.regressionTrials }),
    ...(o.backend !== undefined && { backend: o.backend }),
    ...(o.dockerImage !== undefined && { dockerImage: o.dockerImage }),
    ...(o.requireIsolation !== undefined && { requireIsolation: o.requireIsolation }),
    ...(o.evidenceBudget !== undefined && { evidenceBudgetTokens: o.evidenceBudget }),
    ...(o.prices !== undefined && { prices: readPrices(o.prices) }),
    limits: {
      ...(o.maxSteps !== undefined && { maxSteps: o.maxSteps }),
      ...(o.maxAttempts !== undefined && { maxAttempts: o.maxAttempts }),
      ...(o.maxTokens !== undefined && { maxTokens: o.maxTokens }),
      ...(o.maxCost !== undefined && { maxCostUsd: o.maxCost }),
      ...(o.maxMinutes !== undefined && { maxWallMs: Math.round(o.maxMinutes * 60_000) }),
    },
  };
  const checked = AgentSettings.safeParse(input);
  if (!checked.success) throw new UserError(`invalid agent options: ${checked.error.issues.map((i) => `${i.path.join('.') || 'options'}: ${i.message}`).join('; ')}`);
  const dir = await workspaceFor(target);
  if (!apiKey) progress(`ddbench agent: no API key (${apiKeyEnv} is not set); fine for a local server that needs none`);

  return withInterrupt(async (signal) => {
    // Recorded beside people's attempts in the workspace, for `ddbench report` and the comparison view.
    const { result, notRecorded } = await runAgentAndRecord({ workspace: dir, settings: checked.data, ...(apiKey && { apiKey }), signal, onEvent: printEvent });
    if (o.json) printJson(result);
    else {
      const t = result.totals;
      say(`${result.verified ? 'VERIFIED' : 'NOT VERIFIED'}: ${result.bugId} with ${result.model} (${result.condition}, ${result.protocol} protocol), stopped because ${stopReasonText(result.stopReason)} (${result.stopReason})${result.error ? ` — ${result.error}` : ''}`);
      if (notRecorded === 'configuration') say('  not recorded: the endpoint refused these settings (URL, key or model), so the run was no attempt at the bug');
      say(`  ${t.steps} steps, ${t.attempts} attempts, ${t.tokens} tokens${t.tokensEstimated ? ' (partly estimated)' : ''}, ${t.priced ? `$${t.costUsd.toFixed(4)}` : 'cost unknown (no price for this model)'}, ${(t.wallMs / 1000).toFixed(0)} s`);
      if (result.patch) say(`\n${result.patch}`);
      say(`trajectory: ${result.trajectory}`);
    }
    if (result.stopReason === 'error') return EXIT.usage;
    return result.verified ? EXIT.ok : EXIT.failed;
  });
}

function readPrices(file: string): PriceTable {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UserError(`--prices ${file}: ${(err as Error).message}`);
  }
  const parsed = PriceTable.safeParse(raw);
  if (!parsed.success) throw new UserError(`--prices ${file}: expected {"model": {"input": USD per 1M tokens, "output": ..., "cachedInput"?: ...}}: ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}

/** Progress on stderr, so --json stdout stays one document. */
function printEvent(e: AgentEvent): void {
  switch (e.type) {
    case 'started':
      return progress(`agent: ${e.bugId} with ${e.model} (${e.condition}); trajectory ${e.trajectory}`);
    case 'notice':
      return progress(`agent: ${e.text}`);
    case 'reply':
      if (e.content.trim()) progress(`\n[step ${e.step}] ${e.content.trim()}`);
      return;
    case 'tool-start':
      return progress(`  → ${e.name} ${e.args.length > 200 ? `${e.args.slice(0, 200)}…` : e.args}`);
    case 'tool-end':
      return progress(`    ${e.ok ? '' : '✗ '}${e.output.split('\n')[0]?.slice(0, 160) ?? ''} (${e.ms} ms)`);
    case 'verifying':
      return progress(`  verifying attempt ${e.attempt} …`);
    case 'attempt':
      return progress(`  attempt ${e.attempt.attempt}: ${e.attempt.summary}`);
    default:
      return;
  }
}
