import { strict as assert } from 'node:assert';
import { runAgent } from '../../src/core/agent/agent';
import type { AgentSettingsInput } from '../../src/core/agent/config';
import { readTrajectory } from '../../src/core/agent/trajectory';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { liveHostProcesses } from '../support/processes';
import { AGENT_BUGSET, call, COUNTER_BUG, KEY, lastMessage, openTestWorkspace } from '../support/agent-fixture';
import { ScriptedOpenAIServer, type RecordedRequest, type ScriptedReply } from '../support/scripted-openai-server';

/**
 * The context-augmented condition with its real collaborators: the bundle up front, and
 * the evidence tools on live trials of the fixture bug, through the real client. Its own
 * logic (the bundle, the budget) is tested with fakes in test/unit/agent-context.test.ts.
 */
describe('agent: context-augmented condition (live trials)', function () {
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
    ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
  });
  after(() => {
    if (savedBugs === undefined) delete process.env.DDBENCH_BUGS;
    else process.env.DDBENCH_BUGS = savedBugs;
    const left = liveHostProcesses(ws.dir);
    ws.dispose();
    assert.deepEqual(left, [], 'node processes left behind');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function run(replies: (ScriptedReply | ((r: RecordedRequest) => ScriptedReply))[], settings: Partial<AgentSettingsInput> = {}) {
    server = await ScriptedOpenAIServer.start({ replies });
    const result = await runAgent(
      { workspace: ws.dir, apiKey: KEY, settings: { baseUrl: server.url, model: 'scripted-model', condition: 'context-augmented', trials: 1, regressionTrials: 1, ...settings } },
      { catalog },
    );
    if (server.failures[0]) throw server.failures[0];
    return { result, requests: server.requests };
  }

  it('gives the captured failure up front and answers every evidence tool from real trials', async () => {
    let addedId = '';
    const { result, requests } = await run([
      (req) => {
        const task = String(req.messages[1]!.content);
        assert.match(task, /^# ISSUE\.md/);
        assert.match(task, /## Debugging context\nCaptured from a run of the reproducer on the bug's original code — trial context \(add-twice, seed 1\): FAIL — invariant violated: the total counts each Add once/);
        assert.match(task, /### Investigation notes\n- Compare each 'added' log's amount with the total it reports\./);
        assert.match(task, /#\d+ +[\d.]+s n1 +log +added \{"amount":1,"total":4\}/);
        assert.match(task, /### Node state when the trial ended\nn1: \{ ?"total": 4 ?\}/);
        assert.deepEqual(req.tools?.map((t) => t.function.name), ['list_files', 'read_file', 'search', 'propose_edit', 'node_logs', 'timeline', 'happens_before', 'node_state', 'run_reproducer', 'submit']);
        return call('node_logs', { node: 'n1', text: 'added' });
      },
      (req) => {
        const logs = lastMessage(req);
        assert.match(logs, /^2 events:\n#\d+ .*added \{"amount":1,"total":2\}\n#\d+ .*added \{"amount":1,"total":4\}$/);
        addedId = /#(\d+) .*"total":4/.exec(logs)![1]!;
        return call('happens_before', { event: `#${addedId}` });
      },
      (req) => {
        const hb = lastMessage(req);
        assert.match(hb, new RegExp(`^event #${addedId} `));
        assert.match(hb, /causal past: \d+ events; the last on each node:\n {2}#\d+ .*client/);
        assert.match(hb, /causal future: \d+ events; the first on each node:/);
        return call('timeline', { kinds: ['check'], tail: true, limit: 2 });
      },
      (req) => {
        assert.match(lastMessage(req), /harness +check +the total counts each Add once \{"ok":false,"total":4\}/);
        return call('node_state', { node: 'n1' });
      },
      (req) => {
        assert.match(lastMessage(req), /"total": 4/);
        return call('propose_edit', { path: 'src/total.mjs', edits: [{ search: 'return total + amount * 2;', replace: 'return total + amount;' }] });
      },
      call('run_reproducer', { trials: 1 }),
      (req) => {
        assert.match(lastMessage(req), /^trial run1\/0 \(add-twice, seed 1\): PASS$/);
        return call('node_state', { node: 'n1', trial: 'run1/0' });
      },
      (req) => {
        assert.match(lastMessage(req), /"total": 2/);
        return call('node_logs', { node: 'n9' });
      },
      (req) => {
        assert.match(lastMessage(req), /^Error: no node "n9" in this trial; nodes: .*n1/);
        return call('submit', { explanation: 'addTo doubled the amount' });
      },
    ]);
    assert.equal(result.verified, true, result.error);
    assert.equal(result.condition, 'context-augmented');
    assert.ok(result.totals.evidenceTokens > 0);
    assert.equal(requests.length, 9);
    const start = readTrajectory(result.trajectory).records[0];
    assert.ok(start?.type === 'start' && start.tools.includes('run_reproducer'));
  });
});
