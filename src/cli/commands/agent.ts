import { Option } from 'commander';
import * as fs from 'node:fs';
import { z } from 'zod';
import { runAgent } from '../../core/agent/agent';
import { AgentSettings, Condition, Protocol, type AgentSettingsInput } from '../../core/agent/config';
import type { AgentEvent } from '../../core/agent/events';
import { PriceTable } from '../../core/agent/pricing';
import { UserError } from '../../core/errors';
import { recordAgentRun } from '../../core/study/agent';
import { agentBackendOptions, count, endpointOptions, limitOptions, number, optionGroup, options, outputOptions, trialOptions, type OptionsOf } from '../options';
import { EXIT, printJson, progress, say } from '../output';
import { workspaceFor } from './up';

export const agentOptions = options(
  optionGroup([new Option('--model <name>', 'model name as the endpoint knows it (gpt-4o, qwen2.5-coder:32b, ...)').makeOptionMandatory()], z.object({ model: z.string() })),
  endpointOptions({ baseUrl: 'OpenAI-compatible endpoint (default: $OPENAI_BASE_URL or https://api.openai.com/v1)', apiKeyEnv: 'environment variable holding the API key (default: OPENAI_API_KEY)' }),
  optionGroup(
    [
      new Option('--condition <c>', 'what the agent is given').choices(Condition.options).default('symptom-only'),
      new Option('--protocol <p>', 'tool calling, the text-action protocol, or tools with a fallback to text').choices(Protocol.options).default('auto'),
    ],
    z.object({ condition: Condition, protocol: Protocol }),
  ),
  limitOptions({
    maxSteps: 'model turns (default 40)',
    maxAttempts: 'submissions (default 3)',
    maxTokens: 'prompt + completion tokens (default 1000000)',
    maxCost: 'US dollars, from the price table (default 2)',
    maxMinutes: 'wall-clock time (default 30)',
  }),
  trialOptions({ trials: "live reproducer trials per verification (default: the bug's)" }),
  optionGroup(
    [
      new Option('--regression-trials <n>', 'trials of each regression check per verification (default 2)'),
      new Option('--temperature <t>', "sampling temperature (default: the endpoint's)"),
      new Option('--timeout <s>', 'seconds without a byte from the endpoint before a request fails (default 120)'),
      new Option('--evidence-budget <tokens>', 'tokens of evidence (context bundle and evidence tools) per run (default 40000)'),
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
);
export type AgentOpts = OptionsOf<typeof agentOptions>;

/** `ddbench agent`: the agent investigates, patches and submits until a patch is verified or a limit is reached. */
export async function commandAgent(target: string, o: AgentOpts): Promise<number> {
  const keyEnv = o.apiKeyEnv ?? 'OPENAI_API_KEY';
  const apiKey = process.env[keyEnv] || undefined;
  if (o.apiKeyEnv && !apiKey) throw new UserError(`--api-key-env ${o.apiKeyEnv}: that environment variable is not set`);
  const input: AgentSettingsInput = {
    model: o.model,
    baseUrl: o.baseUrl ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
    condition: o.condition as AgentSettingsInput['condition'],
    protocol: o.protocol as AgentSettingsInput['protocol'],
    ...(o.temperature !== undefined && { temperature: o.temperature }),
    ...(o.timeout !== undefined && { timeoutMs: o.timeout * 1000 }),
    ...(o.trials !== undefined && { trials: o.trials }),
    ...(o.regressionTrials !== undefined && { regressionTrials: o.regressionTrials }),
    ...(o.backend !== undefined && { backend: o.backend }),
    ...(o.dockerImage !== undefined && { dockerImage: o.dockerImage }),
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
  if (!apiKey) progress(`ddbench agent: no API key (${keyEnv} is not set); fine for a local server that needs none`);

  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    const result = await runAgent({ workspace: dir, settings: checked.data, ...(apiKey && { apiKey }), signal: controller.signal, onEvent: printEvent });
    // Recorded beside people's attempts in the workspace, for `ddbench report` and the comparison view.
    await recordAgentRun(dir, result, checked.data.baseUrl);
    if (o.json) printJson(result);
    else {
      const t = result.totals;
      say(`${result.verified ? 'VERIFIED' : 'NOT VERIFIED'}: ${result.bugId} with ${result.model} (${result.condition}, ${result.protocol} protocol), stopped: ${result.stopReason}${result.error ? ` — ${result.error}` : ''}`);
      say(`  ${t.steps} steps, ${t.attempts} attempts, ${t.tokens} tokens${t.tokensEstimated ? ' (partly estimated)' : ''}, ${t.priced ? `$${t.costUsd.toFixed(4)}` : 'cost unknown (no price for this model)'}, ${(t.wallMs / 1000).toFixed(0)} s`);
      if (result.patch) say(`\n${result.patch}`);
      say(`trajectory: ${result.trajectory}`);
    }
    if (result.stopReason === 'error') return EXIT.usage;
    return result.verified ? EXIT.ok : EXIT.failed;
  } finally {
    process.off('SIGINT', onSigint);
  }
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
