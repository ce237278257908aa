import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AgentEvent, AgentResult } from '../../src/core/agent/events';
import { Interrupted } from '../../src/core/interrupt';
import { completedKeys } from '../../src/core/study/bench';
import { buildReport } from '../../src/core/study/report';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { agentAttemptRecord, endpointOf, runAgentAndRecord } from '../../src/core/study/agent';
import { loadRecords } from '../../src/core/study/collect';
import { AttemptRecord } from '../../src/core/study/schema';
import { workspaceRecordsDir } from '../../src/core/study/store';
import { AGENT_BUGSET, call, COUNTER_BUG, openTestWorkspace } from '../support/agent-fixture';
import { FakeChatModel, FakeVerifier } from '../support/agent-fakes';
import { REF_FIX } from '../support/study-fixtures';

describe("study: an agent run as an attempt record", () => {
  let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
  let catalog: Catalog;
  before(async () => (catalog = await loadCatalog(AGENT_BUGSET)));
  beforeEach(async () => (ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG)));
  afterEach(() => ws.dispose());

  /** A finished run's result and trajectory, as the harness writes them: a failed attempt at 40 s, a verified one at 95 s. */
  function finishedRun(over: Partial<AgentResult> = {}): AgentResult {
    const runDir = path.join(ws.dir, '.ddbench', 'runs', 'agent-test');
    fs.mkdirSync(runDir, { recursive: true });
    const trajectory = path.join(runDir, 'trajectory.jsonl');
    const attempt = (n: number, verified: boolean) => ({
      attempt: n,
      patch: REF_FIX,
      files: [],
      verified,
      summary: '',
      reproducer: { passed: verified ? 1 : 0, total: 1, trials: [{ scenario: 'add-twice', index: 0, seed: 1, verdict: verified ? 'pass' : 'fail' }] },
      regression: [{ scenario: 'basic', passed: 1, total: 1 }],
      ms: 3000,
    });
    const lines = [
      { t: 0, type: 'start', time: '2026-03-02T10:00:00.000Z', bugId: COUNTER_BUG, workspace: ws.dir, settings: {}, tools: [] },
      { t: 40_000, type: 'attempt', attempt: attempt(1, false) },
      { t: 95_000, type: 'attempt', attempt: attempt(2, true) },
    ];
    fs.writeFileSync(trajectory, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    return {
      bugId: COUNTER_BUG,
      model: 'gpt-4o',
      condition: 'context-augmented',
      protocol: 'tools',
      verified: true,
      stopReason: 'verified',
      attempts: 2,
      steps: 9,
      tokens: 12_000,
      totals: { steps: 9, attempts: 2, promptTokens: 11_000, completionTokens: 1000, tokens: 12_000, tokensEstimated: false, costUsd: 0.0375, priced: true, evidenceTokens: 3000, wallMs: 100_000 },
      patch: REF_FIX,
      trajectory,
      runDir,
      ...over,
    };
  }

  it('maps the result and its trajectory: timing of each verification, time to fix, usage, endpoint', () => {
    const r = agentAttemptRecord(finishedRun(), { bug: { id: COUNTER_BUG, system: 'counter', tier: 1 }, baseUrl: 'https://api.openai.com/v1', toolVersion: '0.1.0' });
    assert.ok(AttemptRecord.safeParse(r).success);
    assert.deepEqual(r.actor, { kind: 'agent', model: 'gpt-4o', condition: 'context-augmented', protocol: 'tools', endpoint: { kind: 'openai', host: 'api.openai.com' } });
    assert.deepEqual([r.status, r.attempts, r.timeToFixMs, r.startedAt, r.endedAt], ['verified', 2, 95_000, '2026-03-02T10:00:00.000Z', '2026-03-02T10:01:40.000Z']);
    assert.deepEqual(r.verifications.map((v) => [v.elapsedMs, v.verified, v.reproducer?.passed, v.regression.length]), [
      [40_000, false, 0, 1],
      [95_000, true, 1, 1],
    ]);
    assert.deepEqual([r.agent?.tokens, r.agent?.costUsd, r.agent?.steps, r.agent?.stopReason], [12_000, 0.0375, 9, 'verified']);
    assert.deepEqual([r.patch?.added, r.patch?.removed], [1, 1]);
  });

  it('files stop reasons under statuses people share', () => {
    const ctx = { bug: { id: COUNTER_BUG, system: 'counter', tier: 1 as const }, baseUrl: 'http://localhost:11434/v1', toolVersion: '0' };
    const status = (stopReason: AgentResult['stopReason']) => agentAttemptRecord(finishedRun({ verified: false, stopReason, trajectory: '' }), ctx).status;
    assert.deepEqual(
      (['step-limit', 'attempt-limit', 'cost-limit', 'format-errors', 'time-limit', 'error', 'stopped', 'interrupted'] as const).map(status),
      ['not-verified', 'not-verified', 'not-verified', 'not-verified', 'timed-out', 'error', 'abandoned', 'interrupted'],
    );
  });

  it('runs the agent and records the run in its workspace; a run the user stopped is left out', async () => {
    const fix = call('propose_edit', { path: 'src/total.mjs', edits: [{ search: 'return total + amount * 2;', replace: 'return total + amount;' }] });
    const collaborators = () => ({ model: new FakeChatModel([fix, call('submit', {})]), verifier: new FakeVerifier(() => true).verify, catalog });
    const settings = { baseUrl: 'http://127.0.0.1:8080/v1', model: 'fake-model' };
    const { result, record } = await runAgentAndRecord({ workspace: ws.dir, settings }, collaborators());
    assert.ok(record && result.verified);
    assert.deepEqual([record.status, record.bug, record.actor.kind === 'agent' && record.actor.endpoint, record.agent?.trajectory], ['verified', { id: COUNTER_BUG, system: 'counter', tier: 1 }, { kind: 'local', host: '127.0.0.1' }, result.trajectory]);

    const abort = new AbortController();
    const stopped = await runAgentAndRecord({ workspace: ws.dir, settings, signal: abort.signal, onEvent: (e) => e.type === 'started' && abort.abort() }, collaborators());
    assert.deepEqual([stopped.result.stopReason, stopped.record], ['stopped', undefined]);
    const set = loadRecords([workspaceRecordsDir(ws.dir)]);
    assert.deepEqual(set.attempts.map((a) => [a.id, a.bug.tier, a.tool?.version]), [[record.id, 1, JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')).version]]);
  });

  it('a run interrupted by a signal is recorded as interrupted, and neither a bench nor the report counts it', async () => {
    const collaborators = { model: new FakeChatModel([call('list_files', {}), { hang: true }]), verifier: new FakeVerifier(() => true).verify, catalog };
    const abort = new AbortController();
    const onEvent = (e: AgentEvent) => e.type === 'tool-end' && abort.abort(new Interrupted('SIGINT'));
    const { result, record } = await runAgentAndRecord({ workspace: ws.dir, settings: { model: 'fake-model' }, signal: abort.signal, onEvent, bench: { key: 'k', repeat: 1 } }, collaborators);
    assert.deepEqual([result.stopReason, record?.status, record?.agent?.stopReason], ['interrupted', 'interrupted', 'interrupted']);
    const set = loadRecords([workspaceRecordsDir(ws.dir)]);
    assert.deepEqual(set.attempts.map((a) => a.status), ['interrupted']);
    assert.equal(completedKeys(set).size, 0, 'a bench would take the interrupted run as done');
    const report = buildReport(set, new Map());
    assert.deepEqual([report.counted, report.interrupted], [0, 1]);
  });

  it('records a bench run in the file given, with its job', async () => {
    const file = path.join(ws.dir, 'bench.jsonl');
    const collaborators = { model: new FakeChatModel([call('list_files', {})]), verifier: new FakeVerifier(() => true).verify, catalog };
    const { record } = await runAgentAndRecord({ workspace: ws.dir, settings: { model: 'fake-model', limits: { maxSteps: 1 } }, recordsFile: file, bench: { key: 'k', repeat: 2 } }, collaborators);
    assert.deepEqual([record?.status, record?.bench], ['not-verified', { key: 'k', repeat: 2 }]);
    assert.deepEqual(loadRecords([file]).attempts.map((a) => a.id), [record?.id]);
    assert.deepEqual(loadRecords([workspaceRecordsDir(ws.dir)]).attempts, [], 'nothing in the workspace records');
  });

  it('classifies endpoints by host, keeping nothing but the host', () => {
    assert.deepEqual(endpointOf('https://api.openai.com/v1'), { kind: 'openai', host: 'api.openai.com' });
    assert.deepEqual(endpointOf('https://my-res.openai.azure.com/openai/deployments/x'), { kind: 'azure', host: 'my-res.openai.azure.com' });
    for (const local of ['http://localhost:11434/v1', 'http://127.0.0.1:8000/v1', 'http://192.168.1.20:8080/v1', 'http://[::1]:8000/v1', 'http://10.0.0.5/v1']) assert.equal(endpointOf(local).kind, 'local', local);
    assert.deepEqual(endpointOf('https://user:secret@example.com/v1?key=k'), { kind: 'other', host: 'example.com' });
    assert.deepEqual(endpointOf('not a url'), { kind: 'other', host: '' });
  });
});
