/**
 * A local HTTP server that speaks OpenAI's chat-completions API and plays scripted
 * replies, so the agent's tests exercise the real `openai` client: streamed SSE
 * chunks, tool calls split into fragments, usage in a final chunk, and errors with
 * the status codes and bodies the real API (and vLLM, Ollama) send.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

export interface ScriptedToolCall {
  name: string;
  /** An object is sent as its JSON; a string as written (to script malformed arguments). */
  arguments: string | Record<string, unknown>;
  id?: string;
}

export type ScriptedReply =
  | {
      content?: string;
      reasoning?: string;
      toolCalls?: ScriptedToolCall[];
      finishReason?: 'stop' | 'tool_calls' | 'length';
      /** Token counts to report; null reports none (some servers do not). */
      usage?: { prompt: number; completion: number; cached?: number } | null;
    }
  | { status: number; error: { message: string; type?: string; code?: string | null }; headers?: Record<string, string> }
  /** Accepts the request and never answers (for timeouts). */
  | { hang: true }
  /** A hostile or broken endpoint's stream (see HostileStream). */
  | { hostile: HostileStream };

/**
 * Streams no limit of the client may let through: text forever, a chunk every few
 * milliseconds (`endless-slow`, never idle) or megabytes as fast as the socket takes
 * them (`endless-fast`); half a tool call and then silence with the connection kept
 * open (`stall-mid-tool-call`), or then the connection closed, with no finish reason
 * and no [DONE] (`close-mid-tool-call`).
 */
export type HostileStream = 'endless-slow' | 'endless-fast' | 'stall-mid-tool-call' | 'close-mid-tool-call';

/** The half tool call the hostile streams send: a submit whose arguments are cut off mid-string. */
export const HALF_TOOL_CALL = { name: 'submit', arguments: '{"explanation": "the lease is che' };

/** A reply the model gives (as opposed to an HTTP error or no answer). */
export type ScriptedAnswer = Extract<ScriptedReply, { content?: string }>;

export interface RecordedRequest {
  model: string;
  messages: { role: string; content?: unknown; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: { function: { name: string } }[];
  stream?: boolean;
  temperature?: number;
  authorization: string | undefined;
}

export interface ScriptedServerOptions {
  /** Played in order, one per chat request; a function sees the request first. */
  replies: (ScriptedReply | ((req: RecordedRequest) => ScriptedReply))[];
  /** false: refuse requests with `tools` as vLLM does without --enable-auto-tool-choice. */
  toolCalling?: boolean;
  /** Models served; another model gets OpenAI's 404 model_not_found. */
  models?: string[];
  /** When set, any other key gets OpenAI's 401 invalid_api_key. */
  apiKey?: string;
  /** The address to listen on (default loopback); a docker bridge's gateway lets containers on it reach the server. */
  host?: string;
}

const RequestBody = z.looseObject({
  model: z.string(),
  messages: z.array(z.looseObject({ role: z.string(), content: z.unknown().optional(), tool_calls: z.array(z.unknown()).optional(), tool_call_id: z.string().optional() })),
  tools: z.array(z.looseObject({ function: z.looseObject({ name: z.string() }) })).optional(),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).optional(),
  temperature: z.number().optional(),
});

export class ScriptedOpenAIServer {
  readonly requests: RecordedRequest[] = [];
  /** Errors thrown by reply functions (a test's assertions); the client got a 500 for each. */
  readonly failures: Error[] = [];
  private readonly server: http.Server;
  private readonly hanging = new Set<http.ServerResponse>();
  private next = 0;
  private port = 0;

  private constructor(private readonly opts: ScriptedServerOptions) {
    this.server = http.createServer((req, res) => void this.handle(req, res));
  }

  static async start(opts: ScriptedServerOptions): Promise<ScriptedOpenAIServer> {
    const s = new ScriptedOpenAIServer(opts);
    await new Promise<void>((resolve, reject) => {
      s.server.once('error', reject);
      s.server.listen(0, opts.host ?? '127.0.0.1', resolve);
    });
    s.port = (s.server.address() as AddressInfo).port;
    return s;
  }

  /** The base URL to give the client (ends in /v1, like the real one). */
  get url(): string {
    return `http://${this.opts.host ?? '127.0.0.1'}:${this.port}/v1`;
  }

  /** Replies not yet played. */
  get remaining(): number {
    return this.opts.replies.length - this.next;
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const auth = req.headers.authorization;
    if (this.opts.apiKey !== undefined && auth !== `Bearer ${this.opts.apiKey}`) {
      const given = (auth ?? '').replace(/^Bearer /, '');
      // OpenAI echoes a masked key; the harness must not pass even that on.
      return sendError(res, { status: 401, error: { message: `Incorrect API key provided: ${given.slice(0, 3)}****${given.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error', code: 'invalid_api_key' } });
    }
    if (req.method === 'GET' && req.url === '/v1/models') {
      const data = (this.opts.models ?? []).map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted' }));
      return json(res, 200, { object: 'list', data });
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return sendError(res, { status: 404, error: { message: `Invalid URL (${req.method} ${req.url})`, type: 'invalid_request_error' } });
    const body = RequestBody.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    const recorded: RecordedRequest = { model: body.model, messages: body.messages, tools: body.tools, stream: body.stream, temperature: body.temperature, authorization: auth };
    this.requests.push(recorded);
    if (this.opts.models && !this.opts.models.includes(body.model)) {
      return sendError(res, { status: 404, error: { message: `The model \`${body.model}\` does not exist or you do not have access to it.`, type: 'invalid_request_error', code: 'model_not_found' } });
    }
    if (this.opts.toolCalling === false && body.tools?.length) {
      return sendError(res, { status: 400, error: { message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', type: 'BadRequestError' } });
    }
    const entry = this.opts.replies[this.next++];
    if (entry === undefined) return sendError(res, { status: 500, error: { message: `scripted server: no reply left for request ${this.next}`, type: 'server_error' } });
    let reply: ScriptedReply;
    try {
      reply = typeof entry === 'function' ? entry(recorded) : entry;
    } catch (err) {
      this.failures.push(err as Error);
      return sendError(res, { status: 400, error: { message: `scripted server: the reply function failed: ${(err as Error).message}`, type: 'invalid_request_error' } });
    }
    if ('hang' in reply) {
      this.hanging.add(res);
      return;
    }
    if ('status' in reply) return sendError(res, reply);
    if ('hostile' in reply) return this.hostile(res, body.model, reply.hostile);
    stream(res, body.model, reply, body.stream_options?.include_usage === true, JSON.stringify(body.messages).length);
  }

  private hostile(res: http.ServerResponse, model: string, kind: HostileStream): void {
    this.hanging.add(res);
    res.on('close', () => this.hanging.delete(res));
    const send = sseWriter(res, model, false).delta;
    if (kind === 'stall-mid-tool-call' || kind === 'close-mid-tool-call') {
      send({ role: 'assistant', content: null });
      send({ tool_calls: [{ index: 0, id: 'call_half', type: 'function', function: { name: HALF_TOOL_CALL.name, arguments: '' } }] });
      send({ tool_calls: [{ index: 0, function: { arguments: HALF_TOOL_CALL.arguments } }] });
      if (kind === 'close-mid-tool-call') res.end();
      return;
    }
    send({ role: 'assistant', content: '' });
    const text = kind === 'endless-fast' ? 'all work and no play '.repeat(3000) : 'more ';
    const pump = () => {
      while (!res.destroyed) {
        const ready = send({ content: text });
        if (kind === 'endless-slow') return void setTimeout(pump, 5);
        if (!ready) return void res.once('drain', pump);
      }
    };
    pump();
  }
}

/** Starts an SSE response and writes chunks of one streamed completion; each write says false when the socket wants a drain first. */
function sseWriter(res: http.ServerResponse, model: string, includeUsage: boolean) {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const id = `chatcmpl-scripted${Math.random().toString(36).slice(2, 10)}`;
  const created = Math.floor(Date.now() / 1000);
  const send = (choices: unknown[], usage: unknown = null) => {
    const chunk = { id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_scripted', choices, ...(includeUsage && { usage }) };
    return res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  };
  const delta = (d: Record<string, unknown>, finish: string | null = null) => send([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  return { send, delta };
}

function json(res: http.ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
}

function sendError(res: http.ServerResponse, r: { status: number; error: { message: string; type?: string; code?: string | null }; headers?: Record<string, string> }): void {
  json(res, r.status, { error: { message: r.error.message, type: r.error.type ?? 'invalid_request_error', param: null, code: r.error.code ?? null } }, r.headers);
}

/** The reply as OpenAI streams it: role first, then content or tool-call fragments, the finish reason, usage, [DONE]. */
function stream(res: http.ServerResponse, model: string, r: ScriptedAnswer, includeUsage: boolean, promptChars: number): void {
  const { send, delta } = sseWriter(res, model, includeUsage);
  const calls = r.toolCalls ?? [];
  delta({ role: 'assistant', content: calls.length && !r.content ? null : '', refusal: null });
  for (const piece of pieces(r.reasoning ?? '', 12)) delta({ reasoning_content: piece });
  for (const piece of pieces(r.content ?? '', 8)) delta({ content: piece });
  calls.forEach((c, index) => {
    const args = typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments);
    delta({ tool_calls: [{ index, id: c.id ?? `call_${Math.random().toString(36).slice(2, 12)}`, type: 'function', function: { name: c.name, arguments: '' } }] });
    for (const piece of pieces(args, 10)) delta({ tool_calls: [{ index, function: { arguments: piece } }] });
  });
  delta({}, r.finishReason ?? (calls.length ? 'tool_calls' : 'stop'));
  if (includeUsage && r.usage !== null) {
    const prompt = r.usage?.prompt ?? Math.ceil(promptChars / 4);
    const completion = r.usage?.completion ?? Math.ceil(((r.content ?? '').length + JSON.stringify(calls).length) / 4);
    send([], {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: r.usage?.cached ?? 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    });
  }
  res.end('data: [DONE]\n\n');
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
