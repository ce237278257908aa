import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { AGENT_BUGSET, allText, call, COUNTER_BUG, KEY, openTestWorkspace } from '../support/agent-fixture';
import { ddbenchBuilt } from '../support/cli';
import { liveHostProcesses } from '../support/processes';
import { ScriptedOpenAIServer, type ScriptedServerOptions } from '../support/scripted-openai-server';

const ddbench = (args: string[], env: Record<string, string | undefined>) => ddbenchBuilt(args, { DDBENCH_BUGS: AGENT_BUGSET, OPENAI_API_KEY: undefined, ...env });

/** `ddbench agent` as a user runs it, against a scripted OpenAI-compatible server. */
describe('ddbench agent (CLI)', function () {
  this.timeout(180_000);
  let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
  let server: ScriptedOpenAIServer | undefined;

  beforeEach(async () => (ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG)));
  afterEach(async () => {
    await server?.close();
    server = undefined;
    const left = liveHostProcesses(ws.dir);
    ws.dispose();
    assert.deepEqual(left, [], 'node processes left behind');
  });

  async function serve(opts: ScriptedServerOptions): Promise<string> {
    server = await ScriptedOpenAIServer.start(opts);
    return server.url;
  }

  it('exits 0 with the JSON result when a patch is verified, and never writes the key', async () => {
    const url = await serve({
      apiKey: KEY,
      replies: [
        call('read_file', { path: 'src/total.mjs' }),
        call('propose_edit', { path: 'src/total.mjs', edits: [{ search: 'return total + amount * 2;', replace: 'return total + amount;' }] }),
        call('submit', { explanation: 'the amount was doubled' }),
      ],
    });
    const r = await ddbench(['agent', ws.dir, '--model', 'scripted-model', '--base-url', url, '--trials', '1', '--regression-trials', '1', '--json'], { OPENAI_API_KEY: KEY });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { verified: boolean; attempts: number; steps: number; tokens: number; patch: string; trajectory: string; protocol: string };
    assert.equal(out.verified, true);
    assert.equal(out.attempts, 1);
    assert.equal(out.steps, 3);
    assert.ok(out.tokens > 0);
    assert.match(out.patch, /^\+ {2}return total \+ amount;$/m);
    assert.ok(fs.existsSync(out.trajectory));
    assert.equal(out.protocol, 'tools');
    assert.match(r.stderr, /→ read_file \{"path":"src\/total\.mjs"\}/);
    assert.match(r.stderr, /attempt 1: verified: reproducer 1\/1, basic 1\/1/);
    for (const text of [r.stdout, r.stderr, allText(ws.dir)]) assert.ok(!text.includes(KEY), 'the API key was written out');
  });

  it('takes the key from --api-key-env, exits 2 with a clear message on a bad key, and 1 when nothing was verified', async () => {
    const url = await serve({ apiKey: 'sk-the-right-key', replies: [] });
    const bad = await ddbench(['agent', ws.dir, '--model', 'm', '--base-url', url, '--api-key-env', 'MY_LLM_KEY'], { MY_LLM_KEY: KEY });
    assert.equal(bad.code, 2);
    assert.match(bad.stdout + bad.stderr, /rejected the API key \(HTTP 401, invalid_api_key\)/);
    assert.ok(!(bad.stdout + bad.stderr + allText(ws.dir)).includes(KEY));

    const unset = await ddbench(['agent', ws.dir, '--model', 'm', '--base-url', url, '--api-key-env', 'NOT_SET_ANYWHERE'], {});
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /--api-key-env NOT_SET_ANYWHERE: that environment variable is not set/);

    await server!.close();
    const url2 = await serve({ replies: [call('list_files', {}), call('list_files', {})] });
    const limited = await ddbench(['agent', ws.dir, '--model', 'm', '--base-url', url2, '--max-steps', '2', '--condition', 'symptom-only'], {});
    assert.equal(limited.code, 1, limited.stderr);
    assert.match(limited.stdout, /^NOT VERIFIED: counter-double-add with m \(symptom-only, tools protocol\), stopped because it used every step it was allowed \(the step limit\) \(step-limit\)/m);
    assert.match(limited.stderr, /no API key \(OPENAI_API_KEY is not set\)/);
  });
});
