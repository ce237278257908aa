import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { packageRoot } from '../../src/core/paths';
import { loadRecords } from '../../src/core/study/collect';
import { Report } from '../../src/core/study/report';
import { readRecordsFile } from '../../src/core/study/store';
import { AGENT_BUGSET, call, KEY } from '../support/agent-fixture';
import { liveHostProcesses } from '../support/processes';
import { ScriptedOpenAIServer, type RecordedRequest, type ScriptedReply } from '../support/scripted-openai-server';

const cli = path.join(packageRoot(), 'bin', 'ddbench.js');

/** Whatever the order runs ask in: fix the file, then submit; the verdict ends the run. */
function agentReply(req: RecordedRequest): ScriptedReply {
  const last = req.messages.at(-1);
  const text = typeof last?.content === 'string' ? last.content : '';
  if (last?.role === 'tool' && /^applied /.test(text)) return call('submit', { explanation: 'addTo doubled the amount' });
  return call('propose_edit', { path: 'src/total.mjs', edits: [{ search: '  return total + amount * 2;', replace: '  return total + amount;' }] });
}

/** The built CLI in a real process on the agent's fixture bug set, with the scripted server's key in the environment. */
function ddbench(args: string[]) {
  const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, DDBENCH_BUGS: AGENT_BUGSET, DDBENCH_TEST_KEY: KEY }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

/**
 * `ddbench bench` as a user runs it (the built CLI, a real process) on the agent's
 * fixture bug set against the scripted OpenAI-compatible server: killed midway with
 * SIGKILL, then run again; it must finish without running a recorded run twice.
 */
describe('ddbench bench: interrupted and resumed', function () {
  this.timeout(240_000);
  let tmp: string;
  let server: ScriptedOpenAIServer;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-bench-cli-'));
    server = await ScriptedOpenAIServer.start({ replies: Array.from({ length: 200 }, () => agentReply), apiKey: KEY });
  });
  after(async () => {
    await server.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  function bench(out: string) {
    return ddbench(['bench', '--bugs', 'all', '--models', 'model-a,model-b', '--conditions', 'symptom-only,context-augmented', '--out', out, '--base-url', server.url, '--trials', '1', '--concurrency', '1', '--api-key-env', 'DDBENCH_TEST_KEY']);
  }

  it('records every run once, resumes after SIGKILL, and ends with the report', async () => {
    const out = path.join(tmp, 'out');
    const file = path.join(out, 'records', 'bench.jsonl');
    const lines = () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);

    const first = bench(out);
    const deadline = Date.now() + 120_000;
    while (lines() < 1 && Date.now() < deadline) {
      if (first.child.exitCode !== null) assert.fail(`bench exited early (${first.child.exitCode}): ${first.err()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    first.child.kill('SIGKILL');
    await first.exited;
    const before = loadRecords([path.dirname(file)]).attempts;
    assert.ok(before.length >= 1 && before.length < 4, `killed midway: ${before.length} run(s) recorded`);
    assert.match(first.err(), /\[[█░]+\] \d+\/4/, 'a progress bar on stderr');

    const second = bench(out);
    const code = await second.exited;
    assert.equal(code, 0, second.err());
    assert.match(second.err(), new RegExp(`4 run\\(s\\) \\(1 bug\\(s\\) × 2 model\\(s\\) × 2 condition\\(s\\) × 1\\); ${before.length} already recorded`));

    const r = readRecordsFile(file);
    assert.deepEqual(r.problems.filter((p) => p.kind !== 'torn'), [], 'no corrupt lines');
    const after = loadRecords([path.dirname(file)]).attempts;
    assert.equal(after.length, 4);
    const keys = after.map((a) => a.bench?.key);
    assert.equal(new Set(keys).size, 4, 'each run recorded once');
    for (const b of before) assert.ok(after.some((a) => a.id === b.id), `run ${b.bench?.key} kept, not run again`);
    for (const a of after) {
      assert.equal(a.status, 'verified', `${a.bench?.key}: ${a.agent?.stopReason}`);
      assert.equal(a.actor.kind, 'agent');
      assert.equal(a.verifications.length, 1);
      assert.ok(a.timeToFixMs !== undefined && a.agent && a.agent.tokens > 0);
      assert.deepEqual(a.actor.kind === 'agent' && a.actor.endpoint, { kind: 'local', host: '127.0.0.1' });
    }

    const report = Report.parse(JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8')));
    assert.equal(report.counted, 4);
    assert.deepEqual(report.lift.perModel.map((l) => [l.model, l.lift]), [['model-a', 0], ['model-b', 0]]);
    assert.equal(report.attempts.every((a) => a.similarity === 1), true, 'the fix is the reference fix');
    assert.match(fs.readFileSync(path.join(out, 'report.html'), 'utf8'), /<svg /);
    assert.ok(fs.existsSync(path.join(out, 'report.csv')));
    assert.match(second.out(), /model-a · context-augmented\s+100% \(1\/1\)/);
    assert.ok(!fs.readFileSync(file, 'utf8').includes(KEY), 'the API key is never recorded');
    assert.deepEqual(liveHostProcesses(tmp), [], 'no node left behind');
  });
});

/**
 * A study written down once and run from its file: `bench --study` against the scripted
 * OpenAI-compatible server, killed midway and resumed; every record carries the study's
 * hash, and `report --study` reports them, refusing records of another study.
 */
describe('ddbench bench --study: a study file run, resumed and reported', function () {
  this.timeout(240_000);
  let tmp: string;
  let server: ScriptedOpenAIServer;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-study-cli-'));
    server = await ScriptedOpenAIServer.start({ replies: Array.from({ length: 200 }, () => agentReply), apiKey: KEY });
  });
  after(async () => {
    await server.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('stamps every record with the study, resumes, reports it with its provenance, and refuses another study\'s records', async () => {
    const study = path.join(tmp, 'study.json');
    const models = ['model-a', 'model-b'].map((name) => ({ name, baseUrl: server.url, apiKeyEnv: 'DDBENCH_TEST_KEY' }));
    fs.writeFileSync(study, JSON.stringify({ v: 1, name: 'pilot', bugs: 'all', models, conditions: ['symptom-only', 'context-augmented'], trials: 1, seeds: { report: 7 } }, null, 2));
    const out = path.join(tmp, 'out');
    const file = path.join(out, 'records', 'bench.jsonl');
    const lines = () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);

    const refused = ddbench(['bench', '--study', study, '--models', 'x', '--out', out]);
    assert.equal(await refused.exited, 2);
    assert.match(refused.err(), /--study gives the plan; leave out --models/);

    const first = ddbench(['bench', '--study', study, '--out', out]);
    const deadline = Date.now() + 120_000;
    while (lines() < 1 && Date.now() < deadline) {
      if (first.child.exitCode !== null) assert.fail(`bench exited early (${first.child.exitCode}): ${first.err()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    first.child.kill('SIGKILL');
    await first.exited;
    const second = ddbench(['bench', '--study', study, '--out', out]);
    assert.equal(await second.exited, 0, second.err());
    assert.match(second.err(), /of study "pilot" \([0-9a-f]{16}\)/);
    const records = loadRecords([path.dirname(file)]).attempts;
    assert.equal(records.length, 4);
    const hashes = new Set(records.map((a) => a.studyHash));
    assert.equal(hashes.size, 1);
    const hash = [...hashes][0];
    assert.match(hash ?? '', /^[0-9a-f]{16}$/);

    const report = ddbench(['report', '--records', path.dirname(file), '--study', study, '--json']);
    assert.equal(await report.exited, 0, report.err());
    const r = Report.parse(JSON.parse(report.out()));
    assert.deepEqual(r.provenance?.study, { name: 'pilot', hash });
    assert.equal(r.efficiency.seed, 7, "the study's seed plan");
    assert.match(r.provenance?.bugSetHash ?? '', /^[0-9a-f]{16}$/);
    assert.equal(r.counted, 4);

    const other = path.join(tmp, 'other.json');
    fs.writeFileSync(other, JSON.stringify({ v: 1, name: 'another', bugs: 'all', models: [{ name: 'model-a' }] }));
    const mixed = ddbench(['report', '--records', path.dirname(file), '--study', other]);
    assert.equal(await mixed.exited, 2);
    assert.match(mixed.err(), /4 of 4 record\(s\) are not from study "another" .* pass --any-study/);
    const any = ddbench(['report', '--records', path.dirname(file), '--study', other, '--any-study']);
    assert.equal(await any.exited, 0, any.err());
    assert.ok(!fs.readFileSync(file, 'utf8').includes(KEY), 'the API key is never recorded');
  });
});
