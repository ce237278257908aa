import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import { ChatClient, checkEndpoint, LlmError, type EndpointConfig } from '../../src/core/agent/llm';
import type { StreamDelta } from '../../src/core/agent/events';
import { ScriptedOpenAIServer, type ScriptedServerOptions } from '../support/scripted-openai-server';

const KEY = 'sk-test-THIS-KEY-MUST-NEVER-LEAK-1234';
const user = [{ role: 'user' as const, content: 'hello' }];
const tool = { type: 'function' as const, function: { name: 'read_file', description: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } };

describe('agent: chat client against an OpenAI-compatible server', function () {
  this.timeout(20_000);
  let server: ScriptedOpenAIServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function client(opts: ScriptedServerOptions, config: Partial<EndpointConfig> = {}): Promise<ChatClient> {
    server = await ScriptedOpenAIServer.start(opts);
    return new ChatClient({ baseUrl: server.url, model: 'scripted-model', apiKey: KEY, timeoutMs: 5000, maxRetries: 2, ...config }, 10);
  }

  it('streams text, assembles tool-call fragments and reports usage', async () => {
    const c = await client({
      replies: [{ content: 'Let me look at the server.', toolCalls: [{ name: 'read_file', arguments: { path: 'src/server.js' }, id: 'call_1' }, { name: 'search', arguments: { pattern: 'lease' } }], usage: { prompt: 120, completion: 30, cached: 20 } }],
    });
    const deltas: StreamDelta[] = [];
    const reply = await c.complete(user, [tool], { onDelta: (d) => deltas.push(d) });
    assert.equal(reply.content, 'Let me look at the server.');
    assert.ok(deltas.filter((d) => d.kind === 'text').length > 1, 'text arrives in several chunks');
    assert.deepEqual(
      reply.toolCalls.map((t) => [t.name, JSON.parse(t.arguments)]),
      [
        ['read_file', { path: 'src/server.js' }],
        ['search', { pattern: 'lease' }],
      ],
    );
    assert.equal(reply.toolCalls[0]?.id, 'call_1');
    assert.equal(reply.finishReason, 'tool_calls');
    assert.deepEqual(reply.usage, { promptTokens: 120, completionTokens: 30, cachedPromptTokens: 20 });
    const req = server!.requests[0]!;
    assert.equal(req.stream, true);
    assert.equal(req.tools?.[0]?.function.name, 'read_file');
    assert.equal(req.authorization, `Bearer ${KEY}`);
  });

  it('passes reasoning deltas on and copes with a server that reports no usage', async () => {
    const c = await client({ replies: [{ reasoning: 'thinking about leases', content: 'done', usage: null }] });
    const reply = await c.complete(user, undefined);
    assert.equal(reply.reasoning, 'thinking about leases');
    assert.equal(reply.usage, undefined);
  });

  it('says the key was rejected on 401, without retrying and without any of the key', async () => {
    const c = await client({ apiKey: 'sk-the-right-one', replies: [] });
    const err = await c.complete(user, undefined).then(
      () => assert.fail('expected an error'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof LlmError);
    assert.equal(err.kind, 'auth');
    assert.match(err.message, /rejected the API key \(HTTP 401, invalid_api_key\)/);
    assert.ok(!err.message.includes(KEY.slice(-4)) && !err.message.includes(KEY), 'no part of the key in the message');
    assert.equal(server!.requests.length, 0);
  });

  it('names an unknown model and lists the ones the server has', async () => {
    const c = await client({ models: ['llama3.1:8b', 'qwen2.5-coder:7b'], replies: [] });
    await assert.rejects(c.complete(user, undefined), (e: unknown) => e instanceof LlmError && e.kind === 'model' && /does not know the model "scripted-model"; it serves: llama3\.1:8b, qwen2\.5-coder:7b/.test(e.message));
  });

  it('tells a wrong base URL from an unknown model', async () => {
    server = await ScriptedOpenAIServer.start({ replies: [] });
    const c = new ChatClient({ baseUrl: server.url.replace(/\/v1$/, ''), model: 'm', apiKey: KEY, timeoutMs: 5000, maxRetries: 0 });
    await assert.rejects(c.complete(user, undefined), (e: unknown) => e instanceof LlmError && e.kind === 'endpoint' && /check the base URL/.test(e.message));
  });

  it('retries a 429 (honouring retry-after-ms) and then succeeds', async () => {
    const c = await client({ replies: [{ status: 429, error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' }, headers: { 'retry-after-ms': '50' } }, { content: 'ok' }] });
    const retries: number[] = [];
    const reply = await c.complete(user, undefined, { onRetry: (r) => retries.push(r.delayMs) });
    assert.equal(reply.content, 'ok');
    assert.deepEqual(retries, [50]);
    assert.equal(server!.requests.length, 2);
  });

  it('gives up on a server that keeps failing with 500 after its retries', async () => {
    const fail = { status: 500, error: { message: 'The server had an error while processing your request.', type: 'server_error' } };
    const c = await client({ replies: [fail, fail, fail] });
    const retries: string[] = [];
    await assert.rejects(c.complete(user, undefined, { onRetry: (r) => retries.push(r.error.kind) }), (e: unknown) => e instanceof LlmError && e.kind === 'server' && /HTTP 500/.test(e.message));
    assert.deepEqual(retries, ['server', 'server']);
    assert.equal(server!.requests.length, 3);
  });

  it('does not retry quota exhaustion (429 insufficient_quota)', async () => {
    const c = await client({ replies: [{ status: 429, error: { message: 'You exceeded your current quota', code: 'insufficient_quota' } }] });
    await assert.rejects(c.complete(user, undefined), (e: unknown) => e instanceof LlmError && e.kind === 'quota');
    assert.equal(server!.requests.length, 1);
  });

  it('times out a server that does not answer, retries, then says so', async () => {
    const c = await client({ replies: [{ hang: true }, { hang: true }] }, { timeoutMs: 300, maxRetries: 1 });
    const started = Date.now();
    await assert.rejects(c.complete(user, undefined), (e: unknown) => e instanceof LlmError && e.kind === 'timeout' && /within 300 ms/.test(e.message));
    assert.equal(server!.requests.length, 2);
    assert.ok(Date.now() - started < 4000);
  });

  it('fails at once, without retries, when nothing listens on a local port', async () => {
    const port = await freePort();
    const c = new ChatClient({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm', apiKey: KEY, timeoutMs: 2000, maxRetries: 4 }, 10);
    const retries: number[] = [];
    await assert.rejects(
      c.complete(user, undefined, { onRetry: (r) => retries.push(r.attempt) }),
      (e: unknown) => e instanceof LlmError && e.kind === 'refused' && /nothing is listening at .*connection refused.*start the local server/.test(e.message),
    );
    assert.deepEqual(retries, [], 'a refused loopback connection is not retried');
  });

  it('Test Connection: the model served, a model not served, a wrong key, nothing listening', async () => {
    const c = await client({ replies: [], models: ['scripted-model', 'other'], apiKey: KEY });
    assert.deepEqual(await c.check(), { ok: true, message: `${server!.url} answers and serves scripted-model` });
    const wrongModel = new ChatClient({ ...c.config, model: 'gpt-9' }, 10);
    const notServed = await wrongModel.check();
    assert.equal(notServed.ok, false);
    assert.match(notServed.message, /does not list the model "gpt-9"; it serves: scripted-model, other/);
    const badKey = await new ChatClient({ ...c.config, apiKey: 'sk-wrong-key-0000' }, 10).check();
    assert.equal(badKey.ok, false);
    assert.match(badKey.message, /rejected the API key \(HTTP 401/);
    assert.ok(!badKey.message.includes('0000'), 'the key is never echoed');
    const port = await freePort();
    const nobody = await checkEndpoint({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm' }, undefined);
    assert.equal(nobody.ok, false);
    assert.match(nobody.message, /nothing is listening/);
  });

  it('recognises an endpoint without tool calling', async () => {
    const c = await client({ toolCalling: false, replies: [] });
    await assert.rejects(c.complete(user, [tool]), (e: unknown) => e instanceof LlmError && e.kind === 'tools-unsupported');
  });

  it('stops at once when the caller aborts', async () => {
    const c = await client({ replies: [{ hang: true }] }, { timeoutMs: 10_000 });
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    const started = Date.now();
    await assert.rejects(c.complete(user, undefined, { signal: abort.signal }));
    assert.ok(Date.now() - started < 2000);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
