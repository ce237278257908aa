/**
 * Fakes of the agent loop's collaborators, for tests of the loop's own logic (limits,
 * protocol fallback, format errors, trajectory, records): a model that plays scripted
 * replies in process, a verifier that runs no trial, and an evidence runner that writes
 * a made-up trial. The real ones are exercised in test/integration.
 */
import { failedChecks } from '../../src/core/verify/checks';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Verifier } from '../../src/core/agent/agent';
import { LlmError, type ChatHooks, type ChatModel, type ChatReply } from '../../src/core/agent/llm';
import type { Usage } from '../../src/core/agent/pricing';
import type { EvidenceRunner } from '../../src/core/agent/tools/evidence-runs';
import type { EventRecord } from '../../src/core/events/record';
import { STATE_FILE } from '../../src/core/repro/state-snapshot';
import type { TrialResult } from '../../src/core/scenario/verdict';
import type { RecordedRequest, ScriptedAnswer } from './scripted-openai-server';

/** A reply as the scripted server's scripts write it, a request failing with an error, or one that never answers until the run's signal ends it. */
export type FakeReply = ScriptedAnswer | { error: Error } | { hang: true };

/** What the model was sent, in the scripted server's terms (so the same helpers read both). */
export type FakeRequest = Pick<RecordedRequest, 'messages' | 'tools'>;

/**
 * A model that plays scripted replies in order, one per request, in process: the same
 * scripts as the scripted OpenAI-compatible server, without the client or HTTP.
 */
export class FakeChatModel implements ChatModel {
  readonly requests: FakeRequest[] = [];
  /** Errors thrown by reply functions (a test's assertions); the request failed with each. */
  readonly failures: Error[] = [];
  /** Hanging requests the run's signal ended. */
  aborted = 0;
  private next = 0;

  constructor(
    private readonly replies: (FakeReply | ((req: FakeRequest) => FakeReply))[],
    /** false: refuse requests offering tools, as an endpoint without tool calling does. */
    private readonly toolCalling = true,
  ) {}

  async complete(messages: ChatCompletionMessageParam[], tools: ChatCompletionTool[] | undefined, hooks: ChatHooks = {}): Promise<ChatReply> {
    const offered = tools?.flatMap((t) => (t.type === 'function' ? [{ function: { name: t.function.name } }] : []));
    hooks.signal?.throwIfAborted();
    const req: FakeRequest = { messages: structuredClone(messages), tools: offered };
    this.requests.push(req);
    if (!this.toolCalling && tools?.length) throw new LlmError('tools-unsupported', 'the fake endpoint does not accept tool calling', 400);
    const entry = this.replies[this.next++];
    if (entry === undefined) throw new LlmError('server', `fake model: no reply left for request ${this.next}`);
    let reply: FakeReply;
    try {
      reply = typeof entry === 'function' ? entry(req) : entry;
    } catch (err) {
      this.failures.push(err as Error);
      throw new LlmError('bad-request', `fake model: the reply function failed: ${(err as Error).message}`);
    }
    if ('error' in reply) throw reply.error;
    if ('hang' in reply) return this.hang(hooks.signal);
    if (reply.content) hooks.onDelta?.({ kind: 'text', text: reply.content });
    const toolCalls = (reply.toolCalls ?? []).map((c, i) => ({ id: c.id ?? `call_${this.next}_${i}`, name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) }));
    const usage = reply.usage === undefined ? FAKE_USAGE : reply.usage && { promptTokens: reply.usage.prompt, completionTokens: reply.usage.completion, cachedPromptTokens: reply.usage.cached ?? 0 };
    return { content: reply.content ?? '', reasoning: reply.reasoning ?? '', toolCalls, finishReason: reply.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop'), usage: usage ?? undefined };
  }

  private hang(signal: AbortSignal | undefined): Promise<never> {
    return new Promise((_, reject) => {
      const end = () => {
        this.aborted++;
        reject(signal?.reason);
      };
      if (signal?.aborted) end();
      else signal?.addEventListener('abort', end, { once: true });
    });
  }
}

/** Usage reported for a reply that states none: a fixed, small amount. */
export const FAKE_USAGE: Usage = { promptTokens: 100, completionTokens: 10, cachedPromptTokens: 0 };

/** A verifier that runs nothing: it passes the patches `passes` accepts and fails the rest, keeping every patch it saw. */
export class FakeVerifier {
  readonly patches: string[] = [];

  constructor(private readonly passes: (patch: string) => boolean) {}

  readonly verify: Verifier = async (ws, file) => {
    const diff = fs.readFileSync(file, 'utf8');
    this.patches.push(diff);
    const verified = this.passes(diff);
    const scenario = ws.bug.manifest.reproducer.scenario;
    const trial: TrialResult = { index: 0, scenario, seed: 1, verdict: verified ? 'pass' : 'fail', durationMs: 1, ...(!verified && { reason: 'the fake verifier fails this patch' }), eventsFile: '' };
    const run = { scenario, trials: [trial], passed: verified ? 1 : 0, failed: verified ? 0 : 1 };
    return { bugId: ws.bug.id, verified, ...run, regression: [], patch: { files: [], fuzz: 0, diff }, runDir: path.dirname(file), failing: failedChecks([run]), moved: [] };
  };
}

/**
 * An evidence runner that runs nothing: each "trial" fails and leaves the given events
 * and node state in its folder, as a live trial of the reproducer would.
 */
export class FakeEvidenceRunner {
  /** The code each run was asked to run on. */
  readonly runs: string[] = [];

  constructor(
    private readonly events: EventRecord[],
    private readonly state: Record<string, unknown>,
  ) {}

  readonly run: EvidenceRunner = async (_system, codeDir, scenario, runDir, opts) => {
    this.runs.push(codeDir);
    const trials = Array.from({ length: opts.trials }, (_, index): TrialResult => {
      const dir = path.join(runDir, `${scenario}-${index}`);
      fs.mkdirSync(dir, { recursive: true });
      const eventsFile = path.join(dir, 'events.jsonl');
      fs.writeFileSync(eventsFile, this.events.map((e) => JSON.stringify(e)).join('\n') + '\n');
      fs.writeFileSync(path.join(dir, STATE_FILE), JSON.stringify(Object.fromEntries(Object.entries(this.state).map(([node, state]) => [node, { state }]))));
      return { index, scenario, seed: (opts.seed ?? 1) + index, verdict: 'fail', durationMs: 1, reason: 'the fake trial fails', eventsFile };
    });
    return { scenario, trials, passed: 0, failed: trials.length };
  };
}
