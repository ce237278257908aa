import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { runAgent } from '../../src/core/agent/agent';
import { ChatClient, LlmError, type EndpointConfig } from '../../src/core/agent/llm';
import { readTrajectory } from '../../src/core/agent/trajectory';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { FakeVerifier } from '../support/agent-fakes';
import { AGENT_BUGSET, call, COUNTER_BUG, KEY, openTestWorkspace } from '../support/agent-fixture';
import { HALF_TOOL_CALL, ScriptedOpenAIServer, type ScriptedServerOptions } from '../support/scripted-openai-server';

const user = [{ role: 'user' as const, content: 'hello' }];

/**
 * The agent's limits against what would defeat them: garbage collections forced during
 * a run (the time limit), and hostile scripted servers (streams that never end, stall
 * or close mid tool call, replies over the size cap) for the HTTP client's own limits.
 */
describe('agent: every limit holds (hostile scripted servers, forced collections)', function () {
  this.timeout(60_000);
  let server: ScriptedOpenAIServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function client(opts: ScriptedServerOptions, config: Partial<EndpointConfig>): Promise<ChatClient> {
    server = await ScriptedOpenAIServer.start(opts);
    return new ChatClient({ baseUrl: server.url, model: 'scripted-model', apiKey: KEY, timeoutMs: 5000, maxRetries: 1, ...config }, 10);
  }

  const failsWith = (kind: string, message: RegExp) => (e: unknown) => e instanceof LlmError && e.kind === kind && message.test(e.message);

  it('stops a run at its wall limit on Node 20 while garbage collections are forced', async () => {
    const script = path.resolve(__dirname, '..', 'support', 'time-limit-run.ts');
    // The child's own bound: a limit that never fires would otherwise hang the suite.
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--require', 'tsx/cjs', script], { timeout: 40_000, killSignal: 'SIGKILL' });
    assert.deepEqual(JSON.parse(stdout.trim()), { stopReason: 'time-limit', aborted: 1 });
  });

  it('ends an endless slow stream at the reply time limit, and retries it', async () => {
    const c = await client({ replies: [{ hostile: 'endless-slow' }, { hostile: 'endless-slow' }] }, { maxReplyMs: 500 });
    await assert.rejects(c.complete(user, undefined), failsWith('timeout', /still streaming after 500 ms \(the reply time limit\)/));
    assert.equal(server!.requests.length, 2, 'retried once');
  });

  it('ends an endless fast stream at the reply size cap, without retrying it', async () => {
    const c = await client({ replies: [{ hostile: 'endless-fast' }, { hostile: 'endless-fast' }] }, { maxReplyChars: 200_000 });
    await assert.rejects(c.complete(user, undefined), failsWith('too-large', /passed 200000 characters \(the reply size limit\)/));
    assert.equal(server!.requests.length, 1);
  });

  it('refuses a complete reply over the size cap, counting reasoning and tool calls', async () => {
    const c = await client(
      {
        replies: [
          { reasoning: 'r'.repeat(1500), content: 'c'.repeat(1500) },
          { toolCalls: [{ name: 'read_file', arguments: { path: 'p'.repeat(3000) } }] },
          { content: 'c'.repeat(2500) },
        ],
      },
      { maxReplyChars: 2800, maxRetries: 0 },
    );
    await assert.rejects(c.complete(user, undefined), failsWith('too-large', /passed 2800 characters/));
    await assert.rejects(c.complete(user, undefined), failsWith('too-large', /passed 2800 characters/));
    assert.equal((await c.complete(user, undefined)).content.length, 2500, 'under the cap passes');
  });

  it('takes a stream that stalls mid tool call for a timeout, retries, and never returns the half call', async () => {
    const c = await client({ replies: [{ hostile: 'stall-mid-tool-call' }, call('list_files', {})] }, { timeoutMs: 300 });
    const reply = await c.complete(user, undefined);
    assert.deepEqual(
      reply.toolCalls.map((t) => [t.name, t.arguments]),
      [['list_files', '{}']],
    );
    assert.equal(server!.requests.length, 2);
  });

  it('takes a stream closed mid tool call (no finish reason) for a cut-off, and retries it', async () => {
    const c = await client({ replies: [{ hostile: 'close-mid-tool-call' }, { hostile: 'close-mid-tool-call' }] }, {});
    await assert.rejects(c.complete(user, undefined), failsWith('cut-off', /ended before the model finished it \(no finish_reason/));
    assert.equal(server!.requests.length, 2, 'retried once');
  });

  it('never executes a half-streamed tool call in a run', async () => {
    const ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
    try {
      server = await ScriptedOpenAIServer.start({
        replies: [call('propose_edit', { path: 'src/total.mjs', edits: [{ search: 'return total + amount * 2;', replace: 'return total + amount;' }] }), { hostile: 'close-mid-tool-call' }, { hostile: 'stall-mid-tool-call' }],
      });
      const verifier = new FakeVerifier(() => true);
      const result = await runAgent(
        { workspace: ws.dir, apiKey: KEY, settings: { baseUrl: server.url, model: 'scripted-model', timeoutMs: 300, maxRetries: 1 } },
        { verifier: verifier.verify, catalog: await loadCatalog(AGENT_BUGSET) },
      );
      assert.deepEqual([result.stopReason, result.attempts, verifier.patches.length], ['error', 0, 0]);
      assert.match(result.error ?? '', /within 300 ms/);
      const tools = readTrajectory(result.trajectory).records.flatMap((r) => (r.type === 'tool' ? [r.name] : []));
      assert.deepEqual(tools, ['propose_edit'], `the half ${HALF_TOOL_CALL.name} was not run`);
    } finally {
      ws.dispose();
    }
  });
});
