import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runAgent, type AgentRunOptions } from '../../src/core/agent/agent';
import type { AgentSettingsInput } from '../../src/core/agent/config';
import type { AgentEvent } from '../../src/core/agent/events';
import { LlmError } from '../../src/core/agent/llm';
import { readTrajectory } from '../../src/core/agent/trajectory';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { AGENT_BUGSET, allText, call, COUNTER_BUG, KEY, lastMessage, openTestWorkspace, textAction } from '../support/agent-fixture';
import { FAKE_USAGE, FakeChatModel, FakeVerifier, type FakeReply, type FakeRequest } from '../support/agent-fakes';

const wrongFix = { path: 'src/total.mjs', edits: [{ search: 'return total + amount * 2;', replace: 'return total + amount + 1;' }] };
const rightFix = { path: 'src/total.mjs', edits: [{ search: '  return total + amount * 2;', replace: '  return total + amount;' }] };
/** What the fake verifier passes: the fix of the fixture bug. */
const isRightFix = (patch: string) => /^\+ {2}return total \+ amount;$/m.test(patch);

/**
 * The agent loop's own logic on the fixture bug set, with fake collaborators: a model
 * playing scripted replies, a verifier that runs no trial. The real client and real
 * verification are in test/integration/agent-loop.test.ts.
 */
describe('agent: the loop (fake model and verifier)', () => {
  let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
  let catalog: Catalog;

  before(async () => (catalog = await loadCatalog(AGENT_BUGSET)));
  beforeEach(async () => (ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG)));
  afterEach(() => ws.dispose());

  async function run(replies: (FakeReply | ((req: FakeRequest) => FakeReply))[], settings: Partial<AgentSettingsInput> = {}, extra: Partial<AgentRunOptions> & { toolCalling?: boolean } = {}) {
    const { toolCalling, ...opts } = extra;
    const model = new FakeChatModel(replies, toolCalling);
    const verifier = new FakeVerifier(isRightFix);
    const events: AgentEvent[] = [];
    const result = await runAgent(
      { workspace: ws.dir, apiKey: KEY, settings: { model: 'fake-model', ...settings }, onEvent: (e) => events.push(e), ...opts },
      { model, verifier: verifier.verify, catalog },
    );
    if (model.failures[0]) throw model.failures[0];
    return { result, events, requests: model.requests, model, verifier };
  }

  it('reads code, submits a wrong patch, gets the failing verdict, then submits the fix; all of it in the trajectory', async () => {
    const before = fs.readFileSync(path.join(ws.dir, 'src', 'total.mjs'), 'utf8');
    const { result, events, requests, verifier } = await run([
      call('list_files', {}),
      call('read_file', { path: 'src/total.mjs' }, 'The total is computed in total.mjs.'),
      call('propose_edit', wrongFix),
      call('submit', { explanation: 'off by one' }),
      (req) => {
        assert.match(lastMessage(req), /^Attempt 1: NOT VERIFIED\.\nreproducer add-twice: 0\/1 trials passed\n {2}trial 1 \(seed 1\): FAIL — the fake verifier fails this patch\n2 attempt\(s\) left/);
        return call('propose_edit', { path: 'src/total.mjs', edits: [{ search: 'return total + amount + 1;', replace: 'return total + amount;' }] });
      },
      call('submit', { explanation: 'addTo doubled the amount' }),
    ]);
    assert.equal(result.verified, true, result.error);
    assert.deepEqual([result.stopReason, result.attempts, result.steps, result.protocol], ['verified', 2, 6, 'tools']);
    assert.match(result.patch ?? '', /^-  return total \+ amount \* 2;\n\+  return total \+ amount;$/m);
    assert.deepEqual(verifier.patches.map(isRightFix), [false, true], 'each submission was verified from the working copy');
    assert.equal(result.tokens, 6 * (FAKE_USAGE.promptTokens + FAKE_USAGE.completionTokens));
    assert.equal(result.totals.tokensEstimated, false);
    assert.equal(fs.readFileSync(path.join(ws.dir, 'src', 'total.mjs'), 'utf8'), before, "the user's workspace is untouched");
    assert.equal(fs.readFileSync(path.join(result.runDir, 'patch.diff'), 'utf8'), result.patch);

    // The model saw the file with line numbers, and every tool call got its answer.
    assert.match(lastMessage(requests[2]!), /^ {4}3\| {3}return total \+ amount \* 2;$/m);
    const { records, bad } = readTrajectory(result.trajectory);
    assert.deepEqual(bad, []);
    assert.deepEqual([records[0]?.type, records.at(-1)?.type], ['start', 'end']);
    assert.equal(records.filter((r) => r.type === 'tool').length, 6);
    assert.equal(records.filter((r) => r.type === 'usage').length, 6);
    assert.deepEqual(records.flatMap((r) => (r.type === 'attempt' ? [r.attempt.verified] : [])), [false, true]);
    assert.ok(records.some((r) => r.type === 'message' && r.role === 'system'));
    assert.ok(events.some((e) => e.type === 'delta'));
    assert.equal(events.filter((e) => e.type === 'attempt').length, 2);
  });

  it('falls back to the text protocol when the endpoint refuses tool calling, and records it', async () => {
    const { result, requests } = await run(
      [
        textAction('read_file', '{"path": "src/total.mjs"}', 'I will read the helper.'),
        textAction('propose_edit', 'src/total.mjs\n<<<<<<< SEARCH\n  return total + amount * 2;\n=======\n  return total + amount;\n>>>>>>> REPLACE'),
        textAction('submit', '{"explanation": "doubled amount"}'),
      ],
      {},
      { toolCalling: false },
    );
    assert.equal(result.verified, true, result.error);
    assert.equal(result.protocol, 'text');
    assert.equal(requests[0]!.tools?.length, 1 + 4, 'the first request offered tools');
    assert.equal(requests[1]!.tools, undefined, 'later requests do not');
    assert.match(String(requests[1]!.messages[0]!.content), /one fenced block whose info string is the tool name/);
    assert.match(lastMessage(requests[3]!), /^Result of propose_edit:\napplied 1 block\(s\) to src\/total\.mjs/);
    const { records } = readTrajectory(result.trajectory);
    assert.ok(records.some((r) => r.type === 'protocol' && r.protocol === 'text' && /does not accept tool calling/.test(r.reason)));
  });

  it('switches to the text protocol when the model writes its action as text', async () => {
    const { result, requests } = await run([textAction('list_files', '{}'), call('list_files', {})], { limits: { maxSteps: 2 } });
    assert.equal(result.protocol, 'text');
    assert.match(lastMessage(requests[1]!), /^Result of list_files:\n/);
    assert.equal(requests[1]!.tools, undefined);
  });

  it('answers malformed tool arguments and an unknown tool with an error the model can act on', async () => {
    const { result, requests } = await run(
      [call('read_file', '{"path": "src/total.mjs"'), call('read_file', { file: 'src/total.mjs' }), call('rm_rf', {}), call('propose_edit', rightFix), call('submit', {})],
      { limits: { maxFormatErrors: 4 } },
    );
    assert.equal(result.verified, true, `${result.stopReason} ${requests.map(lastMessage).join('\n---\n')}`);
    assert.match(lastMessage(requests[1]!), /^Error: the arguments of read_file are not valid JSON/);
    assert.match(lastMessage(requests[2]!), /^Error: arguments for read_file do not fit its schema \(path: .*; \(arguments\): Unrecognized key: "file"\)/);
    assert.match(lastMessage(requests[3]!), /^Error: there is no tool "rm_rf"; the tools are list_files, read_file, search, propose_edit, submit/);
    assert.equal(readTrajectory(result.trajectory).records.filter((r) => r.type === 'format-error').length, 3);
  });

  it('tells the model precisely which search block did not match, and where the closest text is', async () => {
    const { result, requests } = await run([
      call('propose_edit', {
        path: 'src/total.mjs',
        edits: [
          { search: 'export function addTo(total, amount) {', replace: 'export function addTo(total, amount) {\n  // fixed' },
          { search: '  return total + amount * 3;', replace: '  return total + amount;' },
        ],
      }),
      call('propose_edit', rightFix),
      call('submit', {}),
    ]);
    assert.equal(result.verified, true);
    const said = lastMessage(requests[1]!);
    assert.match(said, /^Error: block 2: SEARCH does not match src\/total\.mjs .*The closest region is lines 3-3 \(\d+% similar\):\n {4}3\| {3}return total \+ amount \* 2;/s);
    assert.match(said, /No block was applied \(2 were sent\); fix block 2/);
  });

  it('keeps every tool inside the workspace: no "..", absolute paths, .ddbench, links out, or the reference fix', async () => {
    const referenceFix = path.join(AGENT_BUGSET, 'counter', COUNTER_BUG, 'bug.patch');
    fs.symlinkSync(referenceFix, path.join(ws.dir, 'src', 'sneaky.patch'));
    const { result, requests } = await run(
      [
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
      { limits: { maxSteps: 10 } },
    );
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
    assert.doesNotMatch(answers[8]!, /\.ddbench|bug\.patch|workspace\.json/);
    const reference = fs.readFileSync(referenceFix, 'utf8');
    for (const a of answers) assert.ok(!a.includes(reference.split('\n')[3]!), 'the reference fix reached the model');
  });

  it('stops at the step limit', async () => {
    const { result } = await run(Array.from({ length: 5 }, () => call('list_files', {})), { limits: { maxSteps: 3 } });
    assert.deepEqual([result.stopReason, result.steps, result.verified], ['step-limit', 3, false]);
  });

  it('stops at the attempt limit, keeping the last patch', async () => {
    const { result } = await run([call('propose_edit', wrongFix), call('submit', {}), call('list_files', {})], { limits: { maxAttempts: 1 } });
    assert.deepEqual([result.stopReason, result.attempts], ['attempt-limit', 1]);
    assert.match(result.patch ?? '', /amount \+ 1/);
  });

  it('checks the attempt limit per submit call: extra submits in one reply are refused, not verified', async () => {
    const submits = { content: '', toolCalls: [0, 1, 2, 3].map((i) => ({ id: `s${i}`, name: 'submit', arguments: { explanation: `try ${i}` } })) };
    const { result, verifier } = await run([call('propose_edit', wrongFix), submits], { limits: { maxAttempts: 1 } });
    assert.deepEqual([result.stopReason, result.attempts, verifier.patches.length], ['attempt-limit', 1, 1]);
    const tools = readTrajectory(result.trajectory).records.flatMap((r) => (r.type === 'tool' && r.name === 'submit' ? [[r.ok, r.output.split('\n')[0]] as const] : []));
    assert.equal(tools.length, 4, 'every call got its answer');
    assert.match(tools[0]![1]!, /^Attempt 1: NOT VERIFIED/);
    for (const [ok, output] of tools.slice(1)) assert.deepEqual([ok, output], [false, 'Error: the attempt limit (1) is reached; this submission was not verified']);
  });

  it('stops at the token limit and at the cost limit (from a price table)', async () => {
    const big = { ...call('list_files', {}), usage: { prompt: 6000, completion: 500 } };
    const tokens = await run([big, big, big], { limits: { maxTokens: 10_000 } });
    assert.deepEqual([tokens.result.stopReason, tokens.result.tokens], ['token-limit', 13_000]);
    const cost = await run([big, big, big], { model: 'priced-model', prices: { 'priced-model': { input: 100, output: 200 } }, limits: { maxCostUsd: 1 } });
    assert.deepEqual([cost.result.stopReason, cost.result.steps, cost.result.totals.priced], ['cost-limit', 2, true]);
    assert.ok(Math.abs(cost.result.totals.costUsd - (2 * (6000 * 100 + 500 * 200)) / 1e6) < 1e-9);
  });

  it('estimates the tokens of replies that report no usage, and says so', async () => {
    const { result } = await run([{ ...call('list_files', {}), usage: null }], { limits: { maxSteps: 1 } });
    assert.ok(result.tokens > 0);
    assert.equal(result.totals.tokensEstimated, true);
  });

  it('stops at the time limit, ending the request in flight', async () => {
    const { result, model } = await run([call('list_files', {}), { hang: true }], { limits: { maxWallMs: 1000 } });
    assert.equal(result.stopReason, 'time-limit');
    assert.equal(model.aborted, 1, 'the hanging request was ended');
  });

  it('gives up after consecutive replies without an action', async () => {
    const { result, requests } = await run([{ content: 'Hmm.' }, { content: 'Thinking.' }, { content: 'Still thinking.', finishReason: 'length' }], { protocol: 'tools' });
    assert.equal(result.stopReason, 'format-errors');
    assert.match(lastMessage(requests[1]!), /Your reply holds no action\. Call one of the tools\./);
    assert.match(lastFormatError(result.trajectory), /^Your reply was cut off at the length limit/);
    assert.equal(result.protocol, 'tools');
  });

  it('stops when asked to, and reports a failed request as the error it is', async () => {
    const abort = new AbortController();
    const stopped = await run([{ hang: true }], {}, { signal: abort.signal, onEvent: (e) => e.type === 'started' && setTimeout(() => abort.abort(), 10) });
    assert.equal(stopped.result.stopReason, 'stopped');
    const failed = await run([{ error: new LlmError('auth', 'http://127.0.0.1:1/v1 rejected the API key (HTTP 401)', 401) }]);
    assert.equal(failed.result.stopReason, 'error');
    assert.match(failed.result.error ?? '', /rejected the API key/);
  });

  it('scrubs the API key from the trajectory should the model ever say it', async () => {
    const { result } = await run([call('list_files', {}, `my key is ${KEY}`)], { limits: { maxSteps: 1 } });
    const text = allText(result.runDir);
    assert.ok(text.includes('my key is [redacted]'));
    assert.ok(!text.includes(KEY), 'the API key is in the run folder');
  });
});

/** The last format error the trajectory holds, as the model was told it. */
function lastFormatError(trajectory: string): string {
  const errors = readTrajectory(trajectory).records.flatMap((r) => (r.type === 'format-error' ? [r.message] : []));
  return errors.at(-1) ?? '';
}
