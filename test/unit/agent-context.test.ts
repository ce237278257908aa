import { strict as assert } from 'node:assert';
import { runAgent } from '../../src/core/agent/agent';
import type { AgentSettingsInput } from '../../src/core/agent/config';
import { readTrajectory } from '../../src/core/agent/trajectory';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import type { EventInput } from '../../src/core/events/event';
import type { EventRecord } from '../../src/core/events/record';
import { AGENT_BUGSET, call, COUNTER_BUG, KEY, lastMessage, openTestWorkspace } from '../support/agent-fixture';
import { FakeChatModel, FakeEvidenceRunner, FakeVerifier, type FakeReply, type FakeRequest } from '../support/agent-fakes';

/** What a failing trial of the counter shows: each Add of 1 raises the total by 2, and the harness's check fails. Numbered as the runtime numbers them. */
function counterEvents(adds: number): EventRecord[] {
  const events: EventInput[] = [];
  for (let i = 1; i <= adds; i++) {
    events.push({ ts: i * 1000, node: 'client', kind: 'send', msg: 'Add', msgId: `m${i}`, peer: 'n1', fields: { body: { amount: 1 } } });
    events.push({ ts: i * 1000 + 100, node: 'n1', kind: 'recv', msg: 'Add', msgId: `m${i}`, peer: 'client' });
    events.push({ ts: i * 1000 + 200, node: 'n1', kind: 'log', level: 'info', msg: 'added', fields: { amount: 1, total: 2 * i } });
  }
  events.push({ ts: (adds + 1) * 1000, node: 'harness', kind: 'check', msg: 'the total counts each Add once', fields: { ok: false, total: 2 * adds } });
  return events.map((e, i) => ({ id: String(i + 1), ...e }));
}

/**
 * The context-augmented condition's own logic with fake collaborators: the bundle built
 * from the captured trial, the evidence tools over it, the evidence budget. The same on
 * real trials is in test/integration/agent-context.test.ts.
 */
describe('agent: context-augmented condition (fake model and evidence runner)', () => {
  let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
  let catalog: Catalog;

  before(async () => (catalog = await loadCatalog(AGENT_BUGSET)));
  beforeEach(async () => (ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG)));
  afterEach(() => ws.dispose());

  async function run(replies: (FakeReply | ((r: FakeRequest) => FakeReply))[], evidence: FakeEvidenceRunner, settings: Partial<AgentSettingsInput> = {}) {
    const model = new FakeChatModel(replies);
    const result = await runAgent(
      { workspace: ws.dir, apiKey: KEY, settings: { model: 'fake-model', condition: 'context-augmented', ...settings } },
      { model, verifier: new FakeVerifier(() => false).verify, evidence: evidence.run, catalog },
    );
    if (model.failures[0]) throw model.failures[0];
    return { result, requests: model.requests };
  }

  it('gives the captured failure up front and answers the evidence tools from the runs', async () => {
    const evidence = new FakeEvidenceRunner(counterEvents(2), { n1: { total: 4 } });
    const { result, requests } = await run(
      [
        (req) => {
          const task = String(req.messages[1]!.content);
          assert.match(task, /^# ISSUE\.md/);
          assert.match(task, /## Debugging context\nCaptured from a run of the reproducer on the bug's original code — trial context \(add-twice, seed 1\): FAIL — the fake trial fails/);
          assert.match(task, /### Investigation notes\n- Compare each 'added' log's amount with the total it reports\./);
          assert.match(task, /#\d+ +[\d.]+m?s n1 +log +added \{"amount":1,"total":4\}/);
          assert.match(task, /### Node state when the trial ended\nn1: \{ ?"total": 4 ?\}/);
          assert.deepEqual(req.tools?.map((t) => t.function.name), ['list_files', 'read_file', 'search', 'propose_edit', 'node_logs', 'timeline', 'happens_before', 'node_state', 'run_reproducer', 'submit']);
          return call('node_logs', { node: 'n1', text: 'added' });
        },
        (req) => {
          assert.match(lastMessage(req), /^2 events:\n#\d+ .*added \{"amount":1,"total":2\}\n#\d+ .*added \{"amount":1,"total":4\}$/);
          return call('run_reproducer', { trials: 1 });
        },
        (req) => {
          assert.match(lastMessage(req), /^trial run1\/0 \(add-twice, seed 1\): FAIL — the fake trial fails\n\nevidence from run1\/0: .*\n {2}#7 .*harness +check +the total counts each Add once/);
          return call('node_state', { node: 'n1', trial: 'run1/0' });
        },
        (req) => {
          assert.match(lastMessage(req), /"total": 4/);
          return call('list_files', {});
        },
      ],
      evidence,
      { limits: { maxSteps: 4 } },
    );
    assert.equal(result.stopReason, 'step-limit');
    assert.equal(requests.length, 4);
    assert.equal(evidence.runs.length, 2, 'one capture on the buggy code, one run_reproducer on the working copy');
    assert.notEqual(evidence.runs[0], evidence.runs[1]);
    assert.ok(result.totals.evidenceTokens > 0);
    const start = readTrajectory(result.trajectory).records[0];
    assert.ok(start?.type === 'start' && start.tools.includes('run_reproducer'));
  });

  it('runs the evidence tools\' regexes in linear time, and names what the engine refuses', async () => {
    const events = counterEvents(1);
    events.push({ id: String(events.length + 1), ts: 9000, node: 'n1', kind: 'log', level: 'warn', msg: `${'a'.repeat(100_000)}b` });
    const { requests } = await run(
      [call('node_logs', { node: 'n1', text: '/(a+)+$/' }), call('timeline', { text: '/^(a|aa)+b$/' }), call('timeline', { text: '/ad(?=ded)/' }), call('list_files', {})],
      new FakeEvidenceRunner(events, { n1: { total: 2 } }),
      { limits: { maxSteps: 4 } },
    );
    const [logs, timeline, lookahead] = requests.slice(1).map(lastMessage);
    assert.equal(logs, 'no events match');
    assert.match(timeline!, /^1 events:\n#\d+ .*n1 +log +a{10}/);
    assert.match(lookahead!, /^Error: text: \/ad\(\?=ded\)\/ uses lookahead/);
  });

  it('holds evidence to the token budget, saying what was cut', async () => {
    const { result, requests } = await run(
      [call('timeline', { limit: 200 }), call('timeline', { limit: 200 }), call('timeline', { limit: 200 }), call('list_files', {})],
      new FakeEvidenceRunner(counterEvents(150), { n1: { total: 300 } }),
      { evidenceBudgetTokens: 1000, limits: { maxSteps: 4 } },
    );
    assert.equal(result.stopReason, 'step-limit');
    const bundle = String(requests[0]!.messages[1]!.content).split('## Debugging context')[1] ?? '';
    assert.ok(bundle.length > 0 && bundle.length <= 2000 + 300, `the bundle takes at most half the budget (${bundle.length} characters)`);
    const answers = requests.slice(1).map(lastMessage);
    assert.ok(answers.some((a) => /cut from the middle/.test(a)));
    assert.match(answers.at(-1)!, /^\[evidence budget exhausted: \d+ of 1000 tokens used/);
    assert.ok(result.totals.evidenceTokens <= 1000 + 50);
  });
});
