import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { UserError } from '../errors';
import { redact } from '../secrets';
import { AGENT_DEFAULTS, AgentSettings, type AgentSettingsInput } from './config';
import type { StreamDelta } from './events';
import type { Usage } from './pricing';

export interface EndpointConfig {
  baseUrl: string;
  model: string;
  /** Never written anywhere; local servers that want none get a placeholder. */
  apiKey: string | undefined;
  temperature?: number;
  /** A request fails after this long without a byte from the server (also mid-stream). */
  timeoutMs: number;
  /** Retries of a request that failed with 429, 5xx, a timeout, a network error or a cut-off stream. */
  maxRetries: number;
  /** A reply fails after this long in all, however steadily it streams (default AGENT_DEFAULTS.maxReplyMs). */
  maxReplyMs?: number;
  /** A reply fails past this many characters of content, reasoning and tool calls (default AGENT_DEFAULTS.maxReplyChars). */
  maxReplyChars?: number;
}

export interface ToolCall {
  id: string;
  name: string;
  /** As the model wrote them: JSON text, not yet checked. */
  arguments: string;
}

export interface ChatReply {
  content: string;
  reasoning: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  /** Undefined when the server reported none (the caller estimates). */
  usage: Usage | undefined;
}


export type LlmErrorKind = 'auth' | 'model' | 'endpoint' | 'unreachable' | 'refused' | 'timeout' | 'cut-off' | 'too-large' | 'rate-limit' | 'quota' | 'server' | 'tools-unsupported' | 'bad-request';

/** A failed request, said so a user can act on it; `retryable` ones were retried first. */
export class LlmError extends UserError {
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly status?: number,
  ) {
    // Endpoints may echo the key in what they say; these messages reach records and output.
    super(redact(message));
    this.name = 'LlmError';
  }

  get retryable(): boolean {
    return this.kind === 'unreachable' || this.kind === 'timeout' || this.kind === 'cut-off' || this.kind === 'rate-limit' || this.kind === 'server';
  }
}

export interface RetryNotice {
  attempt: number;
  delayMs: number;
  error: LlmError;
}

/** Fields some servers (vLLM, llama.cpp, Ollama) add to a delta for a reasoning model's thinking. */
const ReasoningDelta = z.object({ reasoning_content: z.string().optional(), reasoning: z.string().optional() });

const MAX_BACKOFF_MS = 30_000;
/** How long Test Connection waits for each request. */
const CHECK_TIMEOUT_MS = 10_000;

export interface EndpointCheck {
  ok: boolean;
  message: string;
}

export interface ChatHooks {
  onDelta?: (d: StreamDelta) => void;
  onRetry?: (r: RetryNotice) => void;
  signal?: AbortSignal;
}

/** What the agent loop asks of a model: the next reply to a conversation, with these tools offered (none: the text protocol). */
export interface ChatModel {
  complete(messages: ChatCompletionMessageParam[], tools: ChatCompletionTool[] | undefined, hooks?: ChatHooks): Promise<ChatReply>;
}

/** One OpenAI-compatible chat-completions endpoint, streamed, with our own retries so each is visible. */
export class ChatClient implements ChatModel {
  private readonly client: OpenAI;

  constructor(
    readonly config: EndpointConfig,
    private readonly backoffBaseMs = 1000,
  ) {
    this.client = new OpenAI({
      baseURL: config.baseUrl,
      // Ollama and llama.cpp ignore the key but the client insists on one.
      apiKey: config.apiKey || 'no-key',
      maxRetries: 0,
      timeout: config.timeoutMs,
      logLevel: 'off',
    });
  }

  async complete(messages: ChatCompletionMessageParam[], tools: ChatCompletionTool[] | undefined, hooks: ChatHooks = {}): Promise<ChatReply> {
    for (let attempt = 1; ; attempt++) {
      hooks.signal?.throwIfAborted();
      try {
        return await this.once(messages, tools, hooks.onDelta, hooks.signal);
      } catch (err) {
        if (hooks.signal?.aborted) throw err;
        const e = await this.explain(err);
        if (!e.retryable || attempt > this.config.maxRetries) throw e;
        const delayMs = retryAfterMs(err) ?? Math.min(MAX_BACKOFF_MS, this.backoffBaseMs * 2 ** (attempt - 1)) * (0.75 + Math.random() / 2);
        hooks.onRetry?.({ attempt, delayMs, error: e });
        await sleep(delayMs, hooks.signal);
      }
    }
  }

  private async once(
    messages: ChatCompletionMessageParam[],
    tools: ChatCompletionTool[] | undefined,
    onDelta: ((d: StreamDelta) => void) | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ChatReply> {
    // One controller for the caller's stop and our limits: the idle timeout (re-armed by
    // every chunk), the reply's wall time and its size. The SDK's stream ends quietly
    // on an abort, so each limit says why it fired and the reply is checked after.
    const controller = new AbortController();
    const url = this.config.baseUrl;
    const maxReplyMs = this.config.maxReplyMs ?? AGENT_DEFAULTS.maxReplyMs;
    const maxReplyChars = this.config.maxReplyChars ?? AGENT_DEFAULTS.maxReplyChars;
    let failure: LlmError | undefined;
    const fail = (e: LlmError) => {
      failure ??= e;
      controller.abort();
    };
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () => fail(new LlmError('timeout', `no response from ${url} within ${this.config.timeoutMs} ms (the request timeout); a slow local model may need a longer one`)),
        this.config.timeoutMs,
      );
    };
    const wall = setTimeout(() => fail(new LlmError('timeout', `the reply from ${url} was still streaming after ${maxReplyMs} ms (the reply time limit)`)), maxReplyMs);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    arm();
    try {
      const stream = await this.client.chat.completions.create(
        {
          model: this.config.model,
          messages,
          ...(tools?.length ? { tools, tool_choice: 'auto' as const } : {}),
          ...(this.config.temperature !== undefined ? { temperature: this.config.temperature } : {}),
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal: controller.signal },
      );
      const reply: ChatReply = { content: '', reasoning: '', toolCalls: [], finishReason: null, usage: undefined };
      const calls = new Map<number, ToolCall>();
      let size = 0;
      const grow = (text: string) => {
        size += text.length;
        if (size > maxReplyChars) fail(new LlmError('too-large', `the reply from ${url} passed ${maxReplyChars} characters (the reply size limit) and was cut off`));
      };
      for await (const chunk of stream) {
        arm();
        if (chunk.usage) {
          reply.usage = {
            promptTokens: chunk.usage.prompt_tokens,
            completionTokens: chunk.usage.completion_tokens,
            cachedPromptTokens: chunk.usage.prompt_tokens_details?.cached_tokens ?? 0,
          };
        }
        for (const choice of chunk.choices) {
          const d = choice.delta;
          if (d.content) {
            grow(d.content);
            reply.content += d.content;
            onDelta?.({ kind: 'text', text: d.content });
          }
          const r = ReasoningDelta.safeParse(d);
          const thinking = r.success ? (r.data.reasoning_content ?? r.data.reasoning) : undefined;
          if (thinking) {
            grow(thinking);
            reply.reasoning += thinking;
            onDelta?.({ kind: 'reasoning', text: thinking });
          }
          for (const [k, tc] of (d.tool_calls ?? []).entries()) {
            // Fragments are keyed by index; some servers omit it or the id, so fall back sensibly.
            const index = tc.index ?? k;
            let call = calls.get(index);
            if (!call) {
              call = { id: tc.id || `call_${index}_${Date.now().toString(36)}`, name: '', arguments: '' };
              calls.set(index, call);
            }
            if (tc.function?.name) {
              grow(tc.function.name);
              call.name += tc.function.name;
              onDelta?.({ kind: 'tool', name: call.name });
            }
            if (tc.function?.arguments) {
              grow(tc.function.arguments);
              call.arguments += tc.function.arguments;
            }
          }
          if (choice.finish_reason) reply.finishReason = choice.finish_reason;
        }
        if (failure) break;
      }
      if (failure) throw failure;
      signal?.throwIfAborted();
      // A stream that ends without a finish reason was cut off (the connection closed, a
      // proxy gave up): its text and any tool call in it may be half of what was meant.
      if (reply.finishReason === null) throw new LlmError('cut-off', `the reply from ${url} ended before the model finished it (no finish_reason; the connection closed early)`);
      reply.toolCalls = [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
      return reply;
    } catch (err) {
      throw failure ?? err;
    } finally {
      clearTimeout(idle);
      clearTimeout(wall);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The error as a user should read it. Never includes the key (OpenAI's 401 echoes part of it, so its text is dropped). */
  private async explain(err: unknown): Promise<LlmError> {
    const url = this.config.baseUrl;
    if (err instanceof LlmError) return err;
    if (err instanceof APIConnectionTimeoutError) return new LlmError('timeout', `no response from ${url} within ${this.config.timeoutMs} ms`);
    if (err instanceof APIUserAbortError) return new LlmError('timeout', `the request to ${url} was aborted`);
    if (err instanceof APIConnectionError) {
      const cause = causeOf(err);
      // Nothing listens on this machine's port: retrying will not start the server, so say so at once.
      if (cause === 'ECONNREFUSED' && isLoopback(url)) return new LlmError('refused', `nothing is listening at ${url} (connection refused); start the local server, or fix the base URL's port`);
      return new LlmError('unreachable', `cannot reach ${url} (${cause}); is the server running, and is the base URL right?`);
    }
    if (!(err instanceof APIError)) return new LlmError('server', `request to ${url} failed: ${err instanceof Error ? err.message : String(err)}`);
    const status = err.status ?? 0;
    const said = serverMessage(err);
    if (status === 401 || status === 403) {
      return new LlmError('auth', `${url} rejected the API key (HTTP ${status}${err.code ? `, ${err.code}` : ''}); check the key you gave (${AGENT_DEFAULTS.apiKeyEnv}, --api-key-env NAME, or the agent panel)`, status);
    }
    if (status === 404) {
      if (/model/i.test(said)) return new LlmError('model', `${url} does not know the model "${this.config.model}"${await this.knownModels()}`, status);
      return new LlmError('endpoint', `${url}/chat/completions does not exist (HTTP 404); check the base URL (OpenAI-compatible servers usually end in /v1)`, status);
    }
    if (status === 429) {
      if (err.code === 'insufficient_quota') return new LlmError('quota', `${url}: the account has no quota left (429 insufficient_quota)`, status);
      return new LlmError('rate-limit', `${url} is rate-limiting requests (HTTP 429): ${said}`, status);
    }
    if (status === 408 || status === 409 || status >= 500) return new LlmError('server', `${url} failed (HTTP ${status}): ${said}`, status);
    if (/\btools?\b|tool_choice|function/i.test(said)) {
      return new LlmError('tools-unsupported', `${url} does not accept tool calling for "${this.config.model}" (HTTP ${status}: ${said})`, status);
    }
    return new LlmError('bad-request', `${url} refused the request (HTTP ${status}): ${said}`, status);
  }

  /**
   * Whether the endpoint answers with these settings, without running anything: its model
   * list (and whether the model is in it), else — for servers without /models — a one-token
   * completion. Says what is wrong as the run would (a wrong URL, key or model).
   */
  async check(): Promise<EndpointCheck> {
    const url = this.config.baseUrl;
    try {
      const ids: string[] = [];
      for await (const m of this.client.models.list({ timeout: CHECK_TIMEOUT_MS })) {
        ids.push(m.id);
        if (ids.length >= 200) break;
      }
      if (ids.length === 0 || ids.includes(this.config.model)) return { ok: true, message: `${url} answers${ids.length ? ` and serves ${this.config.model}` : ''}` };
      return { ok: false, message: `${url} answers, but does not list the model "${this.config.model}"; it serves: ${ids.slice(0, 20).join(', ')}` };
    } catch (err) {
      const e = await this.explain(err);
      // Some servers have no /models: a tiny completion tells instead.
      if (e.kind !== 'endpoint') return { ok: false, message: e.message };
    }
    try {
      await this.client.chat.completions.create({ model: this.config.model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 }, { timeout: CHECK_TIMEOUT_MS });
      return { ok: true, message: `${url} answers and serves ${this.config.model}` };
    } catch (err) {
      return { ok: false, message: (await this.explain(err)).message };
    }
  }

  /** ": it serves a, b, c" when the server lists its models, else nothing. */
  private async knownModels(): Promise<string> {
    try {
      const ids: string[] = [];
      for await (const m of this.client.models.list({ timeout: 5000 })) {
        ids.push(m.id);
        if (ids.length >= 20) break;
      }
      return ids.length ? `; it serves: ${ids.join(', ')}` : '';
    } catch {
      return '';
    }
  }
}

function serverMessage(err: APIError): string {
  const body = z.object({ message: z.string() }).safeParse(err.error);
  return (body.success ? body.data.message : err.message).slice(0, 500);
}

function isLoopback(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\./.test(host);
  } catch {
    return false;
  }
}

/** The innermost cause's code (ECONNREFUSED, ENOTFOUND, ...): fetch wraps it in "fetch failed". */
function causeOf(err: APIConnectionError): string {
  let e: unknown = err;
  let said = err.message;
  for (let depth = 0; e instanceof Error && depth < 5; depth++, e = e.cause) {
    if ('code' in e && typeof e.code === 'string') return e.code;
    said = e.message;
  }
  return said;
}

function retryAfterMs(err: unknown): number | undefined {
  if (!(err instanceof APIError) || !err.headers) return undefined;
  const ms = Number(err.headers.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return Math.min(ms, MAX_BACKOFF_MS);
  const s = Number(err.headers.get('retry-after'));
  return Number.isFinite(s) && s > 0 ? Math.min(s * 1000, MAX_BACKOFF_MS) : undefined;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** Test Connection: the endpoint and model of these settings, with this key, checked without a run. */
export function checkEndpoint(settings: AgentSettingsInput, apiKey: string | undefined): Promise<EndpointCheck> {
  const parsed = AgentSettings.parse(settings);
  return new ChatClient({ ...parsed, apiKey, maxRetries: 0 }).check();
}
