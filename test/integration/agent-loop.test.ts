import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runAgent, type AgentRunOptions } from '../../src/core/agent/agent';
import type { AgentSettingsInput } from '../../src/core/agent/config';
import type { AgentEvent } from '../../src/core/agent/events';
import { readTrajectory } from '../../src/core/agent/trajectory';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { agentAttemptRecord, runAgentAndRecord } from '../../src/core/study/agent';
import { ATTEMPTS_FILE, workspaceRecordsDir } from '../../src/core/study/store';
import { liveHostProcesses } from '../support/processes';
import { AGENT_BUGSET, allText, call, COUNTER_BUG, KEY, lastMessage, openTestWorkspace, textAction } from '../support/agent-fixture';
import { ScriptedOpenAIServer, type RecordedRequest, type ScriptedServerOptions } from '../support/scripted-openai-server';

const wrongFix = { path: 'src/total.mjs', edits: [{ search: 'return total + amount * 2;', replace: 'return total + amount + 1;' }] };

/**
 * The agent loop end to end on the fixture bug set (a one-node counter whose live
 * trials take a second or two) with its real collaborators: the `openai` client against
 * a scripted server, real verification of every submitted patch. The loop's own logic
 * (limits, format errors, tools) is tested with fakes in test/unit/agent-loop.test.ts.
 */
describe('agent: the loop on a fixture bug (real client and verification)', function () {
  this.timeout(120_000);
  let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
  let catalog: Catalog;
  let server: ScriptedOpenAIServer | undefined;
  let savedBugs: string | undefined;

  before(async () => {
    catalog = await loadCatalog(AGENT_BUGSET);
    // The real verifier (verifyFix) resolves the workspace against the configured bug set.
    savedBugs = process.env.DDBENCH_BUGS;
    process.env.DDBENCH_BUGS = AGENT_BUGSET;
  });
  after(() => {
    if (savedBugs === undefined) delete process.env.DDBENCH_BUGS;
    else process.env.DDBENCH_BUGS = savedBugs;
  });
  beforeEach(async () => (ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG)));
  afterEach(async () => {
    await server?.close();
    server = undefined;
    const left = liveHostProcesses(ws.dir);
    ws.dispose();
    assert.deepEqual(left, [], 'node processes left behind');
  });

  async function run(script: ScriptedServerOptions, settings: Partial<AgentSettingsInput> = {}, extra: Partial<AgentRunOptions> = {}) {
    server = await ScriptedOpenAIServer.start(script);
    const events: AgentEvent[] = [];
    const result = await runAgent(
      {
        workspace: ws.dir,
        apiKey: KEY,
        settings: { baseUrl: server.url, model: 'scripted-model', timeoutMs: 5000, maxRetries: 1, trials: 1, regressionTrials: 1, ...settings },
        onEvent: (e) => events.push(e),
        ...extra,
      },
      { catalog },
    );
    if (server.failures[0]) throw server.failures[0];
    return { result, events, requests: server.requests };
  }

  it('reads code, submits a wrong patch, gets the failing verdict, then submits the fix and is verified', async () => {
    const issueBefore = fs.readFileSync(path.join(ws.dir, 'src', 'total.mjs'), 'utf8');
    const { result, events, requests } = await run({
      replies: [
        call('list_files', {}),
        call('read_file', { path: 'src/total.mjs' }, 'The total is computed in total.mjs.'),
        call('propose_edit', wrongFix),
        call('submit', { explanation: 'off by one' }),
        (req) => {
          assert.match(lastMessage(req), /Attempt 1: NOT VERIFIED\.\nreproducer add-twice: 0\/1 trials passed\n {2}trial 1 \(seed 1\): FAIL — invariant violated: the total counts each Add once/);
          assert.match(lastMessage(req), /\nsimulation: 0\/\d+ seeds passed \(seeds \d+…; the buggy code fails \d+% of seeds\)\n {2}seed \d+: FAIL — invariant violated: the total counts each Add once/);
          return call('propose_edit', { path: 'src/total.mjs', edits: [{ search: 'return total + amount + 1;', replace: 'return total + amount;' }] });
        },
        call('submit', { explanation: 'addTo doubled the amount' }),
      ],
    });
    assert.equal(result.verified, true, result.error);
    assert.equal(result.stopReason, 'verified');
    assert.equal(result.attempts, 2);
    assert.equal(result.steps, 6);
    assert.equal(result.protocol, 'tools');
    assert.match(result.patch ?? '', /^-  return total \+ amount \* 2;\n\+  return total \+ amount;$/m);
    assert.ok(result.tokens > 0 && !result.totals.tokensEstimated);
    assert.equal(fs.readFileSync(path.join(ws.dir, 'src', 'total.mjs'), 'utf8'), issueBefore, "the user's workspace is untouched");
    assert.equal(fs.readFileSync(path.join(result.runDir, 'patch.diff'), 'utf8'), result.patch);

    // The model saw the file with line numbers, and every tool call got its answer.
    assert.match(lastMessage(requests[2]!), /^ {4}3\| {3}return total \+ amount \* 2;$/m);
    const { records, bad } = readTrajectory(result.trajectory);
    assert.deepEqual(bad, []);
    const types = records.map((r) => r.type);
    assert.equal(types[0], 'start');
    assert.equal(types.at(-1), 'end');
    assert.equal(records.filter((r) => r.type === 'tool').length, 6);
    assert.equal(records.filter((r) => r.type === 'usage').length, 6);
    const attempts = records.flatMap((r) => (r.type === 'attempt' ? [r.attempt] : []));
    assert.deepEqual(attempts.map((a) => a.verified), [false, true]);
    assert.equal(attempts[1]?.sim?.failed, 0, 'the fix passed every simulated seed');
    assert.ok((attempts[1]?.sim?.required ?? 0) >= 100 && attempts[1]?.sim?.seeds === attempts[1]?.sim?.required);
    assert.match(attempts[1]?.summary ?? '', /seeds (\d+)\/\1$/);
    const record = agentAttemptRecord(result, { bug: { id: 'counter-add-twice', system: 'counter', tier: 1 }, baseUrl: 'http://127.0.0.1:1/v1', toolVersion: 'test' });
    assert.deepEqual(record.verifications.map((v) => v.sim?.failed === 0), [false, true], "the study record keeps each verification's seeds");
    assert.ok(records.some((r) => r.type === 'message' && r.role === 'system'));
    assert.ok(events.some((e) => e.type === 'delta'));
    assert.deepEqual(events.filter((e) => e.type === 'attempt').length, 2);
    assert.ok(!allText(result.runDir).includes(KEY), 'the API key is in the run folder');
  });

  it('falls back to the text protocol on an endpoint without tool calling, and records it', async () => {
    const { result, requests } = await run({
      toolCalling: false,
      replies: [
        textAction('read_file', '{"path": "src/total.mjs"}', 'I will read the helper.'),
        textAction('propose_edit', 'src/total.mjs\n<<<<<<< SEARCH\n  return total + amount * 2;\n=======\n  return total + amount;\n>>>>>>> REPLACE'),
        textAction('submit', '{"explanation": "doubled amount"}'),
      ],
    });
    // How the loop switches is tested with a fake model; here the real client recognises vLLM's refusal and the fix is verified.
    assert.deepEqual([result.verified, result.protocol, requests.map((r) => r.tools !== undefined)], [true, 'text', [true, false, false, false]]);
    const { records } = readTrajectory(result.trajectory);
    assert.ok(records.some((r) => r.type === 'protocol' && r.protocol === 'text' && /tool choice/.test(r.reason)));
  });

  it('stops when asked to, and reports an endpoint failure as the error it is', async () => {
    const abort = new AbortController();
    const stopped = await run({ replies: [{ hang: true }] }, {}, { signal: abort.signal, onEvent: (e) => e.type === 'started' && setTimeout(() => abort.abort(), 200) });
    assert.equal(stopped.result.stopReason, 'stopped');
    await server!.close();
    const failed = await run({ apiKey: 'sk-other', replies: [] });
    assert.equal(failed.result.stopReason, 'error');
    assert.match(failed.result.error ?? '', /rejected the API key/);
    assert.ok(!allText(failed.result.runDir).includes(KEY));
  });

  it("starts from the bug's code by default, whatever the person edited; from their edits when asked, and the record says so", async () => {
    const file = path.join(ws.dir, 'src', 'total.mjs');
    const bugCode = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, bugCode.replace('return total + amount * 2;', 'return total + amount * 3; // my edit'));
    const reads: string[] = [];
    // The second request carries the first read's output: what the agent's copy holds.
    const readThenStop: ScriptedServerOptions = {
      replies: [
        call('read_file', { path: 'src/total.mjs' }),
        (req: RecordedRequest) => {
          reads.push(lastMessage(req));
          return call('read_file', { path: 'src/total.mjs' });
        },
      ],
    };
    await run(readThenStop, { limits: { maxSteps: 2 } });
    assert.ok(reads[0]?.includes('amount * 2') && !reads[0].includes('my edit'), "the agent's copy holds the bug's code");
    await server?.close();
    reads.length = 0;
    const fromEdits = await runAgentAndRecord(
      { workspace: ws.dir, apiKey: KEY, settings: { baseUrl: (server = await ScriptedOpenAIServer.start(readThenStop)).url, model: 'scripted-model', trials: 1, startFrom: 'workspace', limits: { maxSteps: 2 } } },
      { catalog },
    );
    assert.ok(reads[0]?.includes('my edit'), "the agent's copy holds the person's edits");
    assert.equal(fromEdits.record?.startedFromEdits, true);
    assert.equal(fs.readFileSync(file, 'utf8').includes('my edit'), true, 'the workspace is untouched');
  });

  it('records no attempt when the settings are wrong (a rejected key): a configuration problem, not a result', async () => {
    server = await ScriptedOpenAIServer.start({ replies: [], apiKey: KEY });
    const r = await runAgentAndRecord({ workspace: ws.dir, apiKey: 'sk-wrong-key-0000', settings: { baseUrl: server.url, model: 'scripted-model', maxRetries: 0 } }, { catalog });
    assert.equal(r.result.stopReason, 'error');
    assert.equal(r.result.errorKind, 'auth');
    assert.equal(r.record, undefined);
    assert.equal(r.notRecorded, 'configuration');
    assert.ok(!fs.existsSync(path.join(workspaceRecordsDir(ws.dir), ATTEMPTS_FILE)), 'nothing was written to the records');
  });
});
