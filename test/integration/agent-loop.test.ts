import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runAgent, type AgentRunOptions } from '../../src/core/agent/agent';
import type { AgentSettingsInput } from '../../src/core/agent/config';
import type { AgentEvent } from '../../src/core/agent/events';
import { readTrajectory } from '../../src/core/agent/trajectory';
import { agentAttemptRecord } from '../../src/core/study/agent';
import { liveHostProcesses } from '../support/processes';
import { AGENT_BUGSET, allText, call, COUNTER_BUG, KEY, lastMessage, openTestWorkspace, textAction } from '../support/agent-fixture';
import { ScriptedOpenAIServer, type ScriptedServerOptions } from '../support/scripted-openai-server';

const wrongFix = { path: 'src/total.mjs', edits: [{ search: 'return total + amount * 2;', replace: 'return total + amount + 1;' }] };
const rightFix = { path: 'src/total.mjs', edits: [{ search: '  return total + amount * 2;', replace: '  return total + amount;' }] };

/**
 * The agent loop end to end on the fixture bug set (a one-node counter whose live
 * trials take a second or two): the real `openai` client against a scripted server,
 * real verification of every submitted patch.
 */
describe('agent: the loop on a fixture bug', function () {
  this.timeout(120_000);
  let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
  let server: ScriptedOpenAIServer | undefined;
  let savedBugs: string | undefined;

  before(() => {
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
    const result = await runAgent({
      workspace: ws.dir,
      apiKey: KEY,
      settings: { baseUrl: server.url, model: 'scripted-model', timeoutMs: 5000, maxRetries: 1, trials: 1, regressionTrials: 1, ...settings },
      onEvent: (e) => events.push(e),
      ...extra,
    });
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
          assert.match(lastMessage(req), /Attempt 1: NOT VERIFIED\.\nreproducer add-twice: 0\/1 trials passed\n {2}trial #0 \(seed 1\): FAIL — invariant violated: the total counts each Add once/);
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
    assert.equal(result.verified, true, result.error);
    assert.equal(result.protocol, 'text');
    assert.equal(requests[0]!.tools?.length, 1 + 4, 'the first request offered tools');
    assert.equal(requests[1]!.tools, undefined, 'later requests do not');
    assert.match(String(requests[1]!.messages[0]!.content), /one fenced block whose info string is the tool name/);
    assert.match(lastMessage(requests[3]!), /^Result of propose_edit:\napplied 1 block\(s\) to src\/total\.mjs/);
    const { records } = readTrajectory(result.trajectory);
    assert.ok(records.some((r) => r.type === 'protocol' && r.protocol === 'text' && /tool choice/.test(r.reason)));
  });

  it('answers malformed tool arguments and an unknown tool with an error the model can act on', async () => {
    const { result, requests } = await run({
      replies: [
        call('read_file', '{"path": "src/total.mjs"'),
        call('read_file', { file: 'src/total.mjs' }),
        call('rm_rf', {}),
        call('propose_edit', rightFix),
        call('submit', {}),
      ],
    }, { limits: { maxFormatErrors: 4 } });
    assert.equal(result.verified, true, `${result.stopReason} ${requests.map(lastMessage).join('\n---\n')}`);
    assert.match(lastMessage(requests[1]!), /^Error: the arguments of read_file are not valid JSON/);
    assert.match(lastMessage(requests[2]!), /^Error: arguments for read_file do not fit its schema \(path: .*; \(arguments\): Unrecognized key: "file"\)/);
    assert.match(lastMessage(requests[3]!), /^Error: there is no tool "rm_rf"; the tools are list_files, read_file, search, propose_edit, submit/);
    assert.equal(readTrajectory(result.trajectory).records.filter((r) => r.type === 'format-error').length, 3);
  });

  it('tells the model precisely which search block did not match, and where the closest text is', async () => {
    const { result, requests } = await run({
      replies: [
        call('propose_edit', {
          path: 'src/total.mjs',
          edits: [
            { search: 'export function addTo(total, amount) {', replace: 'export function addTo(total, amount) {\n  // fixed' },
            { search: '  return total + amount * 3;', replace: '  return total + amount;' },
          ],
        }),
        call('propose_edit', rightFix),
        call('submit', {}),
      ],
    });
    assert.equal(result.verified, true);
    const said = lastMessage(requests[1]!);
    assert.match(said, /^Error: block 2: SEARCH does not match src\/total\.mjs .*The closest region is lines 3-3 \(\d+% similar\):\n {4}3\| {3}return total \+ amount \* 2;/s);
    assert.match(said, /No block was applied \(2 were sent\); fix block 2/);
  });

  it('keeps every tool inside the workspace: no "..", absolute paths, .ddbench, links out, or the reference fix', async () => {
    const referenceFix = path.join(AGENT_BUGSET, 'counter', COUNTER_BUG, 'bug.patch');
    fs.symlinkSync(referenceFix, path.join(ws.dir, 'src', 'sneaky.patch'));
    const { result, requests } = await run({
      replies: [
        call('read_file', { path: '../../counter/counter-double-add/bug.patch' }),
        call('read_file', { path: referenceFix }),
        call('read_file', { path: '.ddbench/workspace.json' }),
        call('read_file', { path: 'src/sneaky.patch' }),
        call('list_files', { path: '..' }),
        call('search', { pattern: 'amount \\* 2', path: '/' }),
        call('propose_edit', { path: '../escape.js', edits: [{ search: '', replace: 'x' }] }),
        call('propose_edit', { path: 'ISSUE.md', edits: [{ search: '# The total grows too fast', replace: '# Fixed' }] }),
        call('list_files', {}),
        call('list_files', {}),
      ],
    }, { limits: { maxSteps: 10 } });
    assert.equal(result.stopReason, 'step-limit');
    const answers = requests.slice(1).map(lastMessage);
    assert.match(answers[0]!, /"\.\." is not allowed/);
    assert.match(answers[1]!, /relative to the repository root/);
    assert.match(answers[2]!, /not part of the repository/);
    assert.match(answers[3]!, /points outside the repository/);
    assert.match(answers[4]!, /"\.\." is not allowed/);
    assert.match(answers[5]!, /relative to the repository root/);
    assert.match(answers[6]!, /"\.\." is not allowed/);
    assert.match(answers[7]!, /only files under src\/ make up the system/);
    const listing = answers[8]!;
    assert.doesNotMatch(listing, /\.ddbench|bug\.patch|workspace\.json/);
    const reference = fs.readFileSync(referenceFix, 'utf8');
    for (const a of answers) assert.ok(!a.includes(reference.split('\n')[3]!), 'the reference fix reached the model');
  });

  it('stops at the step limit', async () => {
    const { result } = await run({ replies: Array.from({ length: 5 }, () => call('list_files', {})) }, { limits: { maxSteps: 3 } });
    assert.equal(result.stopReason, 'step-limit');
    assert.equal(result.steps, 3);
    assert.equal(result.verified, false);
  });

  it('stops at the attempt limit, keeping the last patch', async () => {
    const { result } = await run({ replies: [call('propose_edit', wrongFix), call('submit', {}), call('list_files', {})] }, { limits: { maxAttempts: 1 } });
    assert.equal(result.stopReason, 'attempt-limit');
    assert.equal(result.attempts, 1);
    assert.match(result.patch ?? '', /amount \+ 1/);
  });

  it('stops at the token limit and at the cost limit (from a price table)', async () => {
    const big = { ...call('list_files', {}), usage: { prompt: 6000, completion: 500 } };
    const tokens = await run({ replies: [big, big, big] }, { limits: { maxTokens: 10_000 } });
    assert.equal(tokens.result.stopReason, 'token-limit');
    assert.equal(tokens.result.tokens, 13_000);
    await server!.close();
    const cost = await run({ replies: [big, big, big] }, { model: 'priced-model', prices: { 'priced-model': { input: 100, output: 200 } }, limits: { maxCostUsd: 1 } });
    assert.equal(cost.result.stopReason, 'cost-limit');
    assert.equal(cost.result.steps, 2);
    assert.ok(Math.abs(cost.result.totals.costUsd - (2 * (6000 * 100 + 500 * 200)) / 1e6) < 1e-9);
    assert.equal(cost.result.totals.priced, true);
  });

  it('stops at the time limit, even mid-request', async () => {
    const started = Date.now();
    const { result } = await run({ replies: [call('list_files', {}), { hang: true }] }, { timeoutMs: 60_000, limits: { maxWallMs: 1500 } });
    assert.equal(result.stopReason, 'time-limit');
    assert.ok(Date.now() - started < 10_000);
  });

  it('gives up after consecutive replies without an action', async () => {
    const { result, requests } = await run({ replies: [{ content: 'Hmm.' }, { content: 'Thinking.' }, { content: 'Still thinking.', finishReason: 'length' }] }, { protocol: 'tools' });
    assert.equal(result.stopReason, 'format-errors');
    assert.match(lastMessage(requests[1]!), /Your reply holds no action\. Call one of the tools\./);
    assert.equal(result.protocol, 'tools');
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
});
