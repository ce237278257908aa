import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { completedKeys, parseShard, planBench, runBench, type BenchJob, type BenchProgress } from '../../src/core/study/bench';
import { agentJobRunner, jobDir } from '../../src/core/study/bench-agent';
import { loadRecords } from '../../src/core/study/collect';
import type { AttemptRecord } from '../../src/core/study/schema';
import { appendRecords } from '../../src/core/study/store';
import { AGENT_BUGSET, call, COUNTER_BUG } from '../support/agent-fixture';
import { FakeChatModel, FakeVerifier } from '../support/agent-fakes';
import { agent } from '../support/study-fixtures';

const plan = { bugs: ['b1', 'b2'], models: ['m1', 'm2'], conditions: ['symptom-only', 'context-augmented'] as const, repeats: 2 };

describe('bench: plan, shards, resume (scheduler with a stand-in runner)', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-bench-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  /** A stand-in runner's run: recorded in `file`, as the agent's job runner records its runs. */
  const recordOf = (file: string, job: BenchJob, status: AttemptRecord['status'] = 'verified'): AttemptRecord => {
    const record = agent(job.model, job.condition, { bug: job.bugId, status, key: job.key });
    appendRecords(file, [record]);
    return record;
  };

  it('plans every bug × model × condition × repeat once, in a fixed order', () => {
    const jobs = planBench({ ...plan, conditions: [...plan.conditions] });
    assert.equal(jobs.length, 16);
    assert.equal(new Set(jobs.map((j) => j.key)).size, 16);
    assert.equal(jobs[0]!.key, 'b1|m1|symptom-only|0');
    assert.equal(jobs[15]!.key, 'b2|m2|context-augmented|1');
  });

  it('shards partition the plan: disjoint, and together the whole', () => {
    const all = planBench({ ...plan, conditions: [...plan.conditions] }).map((j) => j.key);
    const parts = [0, 1, 2].map((i) => planBench({ ...plan, conditions: [...plan.conditions], shard: { index: i, count: 3 } }).map((j) => j.key));
    assert.deepEqual(parts.flat().sort(), [...all].sort());
    assert.deepEqual(parts.map((p) => p.length), [6, 5, 5]);
    assert.deepEqual(parseShard('2/3'), { index: 2, count: 3 });
    for (const bad of ['3/3', '1', 'a/b', '0/0', '-1/2']) assert.throws(() => parseShard(bad), /--shard/);
  });

  it('records every run, and a second run skips what is done', async () => {
    const jobs = planBench({ ...plan, conditions: [...plan.conditions] });
    const file = path.join(tmp, 'records', 'bench.jsonl');
    const ran: string[] = [];
    const progress: BenchProgress[] = [];
    const first = await runBench({
      jobs,
      completed: new Set(),
      concurrency: 3,
      runJob: async (job) => {
        ran.push(job.key);
        await new Promise((r) => setTimeout(r, 2));
        return recordOf(file, job, job.repeat === 0 ? 'verified' : 'not-verified');
      },
      onProgress: (p) => progress.push(p),
    });
    assert.deepEqual([first.ran, first.verified, first.skipped, first.interrupted], [16, 8, 0, false]);
    assert.equal(ran.length, 16);
    const last = progress[progress.length - 1]!;
    assert.deepEqual([last.done, last.total, last.running, last.etaMs], [16, 16, 0, 0]);
    assert.ok(progress.some((p) => p.etaMs !== null && p.etaMs > 0), 'an ETA while runs are left');

    const again = await runBench({ jobs, completed: completedKeys(loadRecords([path.dirname(file)])), concurrency: 3, runJob: async () => assert.fail('nothing left to run') });
    assert.deepEqual([again.ran, again.skipped], [0, 16]);
    assert.equal(loadRecords([path.dirname(file)]).attempts.length, 16);
  });

  it('an interrupted batch resumes with the runs that did not finish, and errored runs run again', async () => {
    const jobs = planBench({ ...plan, conditions: [...plan.conditions] });
    const file = path.join(tmp, 'bench.jsonl');
    const stop = new AbortController();
    let started = 0;
    const first = await runBench({
      jobs,
      completed: new Set(),
      concurrency: 2,
      signal: stop.signal,
      runJob: async (job, signal) => {
        if (++started === 5) stop.abort();
        if (signal.aborted) return undefined; // an interrupted run records nothing
        return recordOf(file, job, job.key === 'b1|m1|symptom-only|1' ? 'error' : 'verified');
      },
    });
    assert.ok(first.interrupted);
    const done = completedKeys(loadRecords([file]));
    assert.equal(done.size, first.ran - first.errors);
    assert.ok(!done.has('b1|m1|symptom-only|1'), 'an errored run is not done');

    const rerun: string[] = [];
    const second = await runBench({ jobs, completed: done, concurrency: 2, runJob: async (job) => (rerun.push(job.key), recordOf(file, job)) });
    assert.equal(second.skipped, done.size);
    assert.ok(rerun.includes('b1|m1|symptom-only|1'));
    assert.deepEqual(new Set([...done, ...rerun]).size, 16);
    assert.equal(rerun.filter((k) => done.has(k)).length, 0, 'no completed run ran twice');
    assert.equal(completedKeys(loadRecords([file])).size, 16);
  });

  it('a runner that throws stops the batch and the error surfaces; finished runs stay recorded', async () => {
    const jobs = planBench({ ...plan, conditions: [...plan.conditions] });
    const file = path.join(tmp, 'bench.jsonl');
    await assert.rejects(
      runBench({
        jobs,
        completed: new Set(),
        concurrency: 1,
        runJob: async (job) => {
          if (job.key === jobs[3]!.key) throw new Error('harness broke');
          return recordOf(file, job);
        },
      }),
      /harness broke/,
    );
    assert.equal(loadRecords([file]).attempts.length, 3);
  });
});

describe('bench: the agent job runner (fake model and verifier)', () => {
  let tmp: string;
  let catalog: Catalog;
  before(async () => (catalog = await loadCatalog(AGENT_BUGSET)));
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-bench-agent-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const fix = call('propose_edit', { path: 'src/total.mjs', edits: [{ search: 'return total + amount * 2;', replace: 'return total + amount;' }] });
  const [job] = planBench({ bugs: [COUNTER_BUG], models: ['org/model:7b'], conditions: ['symptom-only'], repeats: 1 });

  it('runs each job in a fresh workspace of its own and records it in the bench file', async () => {
    const file = path.join(tmp, 'records', 'bench.jsonl');
    const leftover = path.join(jobDir(tmp, job!), 'left-over.txt');
    fs.mkdirSync(path.dirname(leftover), { recursive: true });
    fs.writeFileSync(leftover, 'from an interrupted run');
    const runJob = agentJobRunner({ catalog, outDir: tmp, recordsFile: file, endpoint: () => ({ baseUrl: 'http://127.0.0.1:8000/v1' }), settings: {}, collaborators: { model: new FakeChatModel([fix, call('submit', {})]), verifier: new FakeVerifier(() => true).verify } });
    const record = await runJob(job!, new AbortController().signal);
    assert.deepEqual([record?.status, record?.bench, record?.actor.kind === 'agent' && record.actor.model], ['verified', { key: job!.key, repeat: 0 }, 'org/model:7b']);
    assert.deepEqual(loadRecords([file]).attempts.map((a) => a.id), [record?.id]);
    assert.ok(!fs.existsSync(leftover), 'the leftover workspace was replaced');
    assert.ok(fs.existsSync(path.join(jobDir(tmp, job!), 'ISSUE.md')));
  });

  it('records nothing for an interrupted job, so resuming runs it again', async () => {
    const file = path.join(tmp, 'bench.jsonl');
    const stop = new AbortController();
    const model = new FakeChatModel([{ hang: true }]);
    const runJob = agentJobRunner({ catalog, outDir: tmp, recordsFile: file, endpoint: () => ({ baseUrl: 'http://127.0.0.1:8000/v1' }), settings: {}, collaborators: { model, verifier: new FakeVerifier(() => true).verify } });
    const running = runJob(job!, stop.signal);
    while (model.requests.length === 0) await new Promise((r) => setImmediate(r));
    stop.abort();
    assert.equal(await running, undefined);
    assert.ok(!fs.existsSync(file));
  });
});
