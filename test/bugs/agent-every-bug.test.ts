import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readTrajectory } from '../../src/core/agent/trajectory';
import { findBug, findSystem, loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { upstreamMissing } from '../../src/core/bugs/upstream-installed';
import { packageRoot } from '../../src/core/paths';
import { loadRecords } from '../../src/core/study/collect';
import { Report } from '../../src/core/study/report';
import { KEY } from '../support/agent-fixture';
import { ORACLE_MODEL, oracleReplies } from '../support/oracle-model';
import { liveHostProcesses } from '../support/processes';
import { ScriptedOpenAIServer } from '../support/scripted-openai-server';

/**
 * `DDBENCH_AGENT=all` runs the agent on every bug of the set in both conditions (about
 * an hour on two cores), `DDBENCH_AGENT=<id>,<id>` on those bugs; by default (CI) on one
 * bug, which still takes every step of the loop on real clusters.
 */
const CHOSEN = process.env.DDBENCH_AGENT;
const ALL = CHOSEN === 'all';
const QUICK_BUGS = CHOSEN && !ALL ? CHOSEN.split(',') : ['zabkv-stale-txn-after-rejoin'];
/** A bug in real upstream code the default run adds where it can run: etcd installed (`ddbench setup upstream`, as CI does) and root for its run network. */
const PILOT_BUG = 'etcd-revision-behind-compaction';
const CONDITIONS = ['symptom-only', 'context-augmented'] as const;
const EVIDENCE_TOOLS = ['node_logs', 'node_state', 'timeline'];
const cli = path.join(packageRoot(), 'bin', 'ddbench.js');

/**
 * `ddbench bench` (the built CLI) pointed at an OpenAI-compatible server, on the real
 * bug set: for each bug and condition the agent lists the files, reads the evidence it
 * is given, reads and edits the code, and submits; the harness verifies the patch on a
 * scratch copy with live trials, simulated seeds and the regression checks. The model
 * is the scripted oracle (no LLM is reachable here): it proposes each bug's reference
 * fix, so every run must end verified, and any that does not is a harness or bug-set
 * fault.
 */
describe(`agent over the bug set: ${ALL ? 'every bug' : QUICK_BUGS.join(', ')}${CHOSEN ? '' : ` (and ${PILOT_BUG} where etcd is installed)`} × both conditions (scripted oracle model)`, function () {
  this.timeout((ALL ? 180 : 15) * 60_000);
  let catalog: Catalog;
  let tmp: string;
  let server: ScriptedOpenAIServer;
  let pilot: string[] = [];

  before(async () => {
    catalog = await loadCatalog();
    if (!CHOSEN || ALL) {
      const cannot = process.getuid?.() !== 0 ? 'the run network needs root' : upstreamMissing(findSystem(catalog, findBug(catalog, PILOT_BUG).system));
      if (cannot === undefined) pilot = ALL ? catalog.bugs.filter((b) => b.kind === 'upstream').map((b) => b.id) : [PILOT_BUG];
      else if (process.env.CI) throw new Error(`CI runs \`ddbench setup upstream\` first, yet ${cannot}`);
    }
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-agent-set-'));
    const reply = oracleReplies(catalog);
    server = await ScriptedOpenAIServer.start({ apiKey: KEY, models: [ORACLE_MODEL], replies: Array.from({ length: 20 * 2 * catalog.bugs.length }, () => reply) });
  });
  after(async () => {
    await server.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('verifies the fix of every run, with the evidence tools answering in the context-augmented condition', async () => {
    const bugs = [...(ALL ? catalog.bugs.filter((b) => b.kind === 'miniature').map((b) => b.id) : QUICK_BUGS), ...pilot];
    const out = path.join(tmp, 'bench');
    const args = [cli, 'bench', '--bugs', ...bugs, '--models', ORACLE_MODEL, '--conditions', CONDITIONS.join(','), '--out', out, '--base-url', server.url, '--trials', '1', '--max-attempts', '1', '--api-key-env', 'DDBENCH_TEST_KEY'];
    const child = spawn(process.execPath, args, { env: { ...process.env, DDBENCH_TEST_KEY: KEY }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    if (server.failures[0]) throw server.failures[0];
    assert.equal(code, 0, stderr.slice(-4000));

    const attempts = loadRecords([path.join(out, 'records')]).attempts;
    assert.equal(attempts.length, bugs.length * CONDITIONS.length);
    for (const a of attempts) {
      const condition = a.actor.kind === 'agent' ? a.actor.condition : undefined;
      const run = `${a.bug.id} (${condition})`;
      console.log(`      ${run}: ${a.status}, ${a.agent?.steps} steps, ${((a.timeToFixMs ?? 0) / 1000).toFixed(0)} s`);
      assert.equal(a.status, 'verified', `${run}: ${a.agent?.stopReason}`);
      const trajectory = a.agent?.trajectory;
      assert.ok(trajectory && fs.existsSync(trajectory), `${run}: its trajectory`);
      const tools = readTrajectory(trajectory).records.flatMap((r) => (r.type === 'tool' ? [r] : []));
      assert.ok(tools.every((t) => t.ok), `${run}: a tool failed: ${JSON.stringify(tools.find((t) => !t.ok))}`);
      const evidence = tools.filter((t) => EVIDENCE_TOOLS.includes(t.name));
      if (condition === 'context-augmented') {
        assert.deepEqual(evidence.map((t) => t.name), EVIDENCE_TOOLS, `${run}: the evidence tools`);
        assert.ok(evidence.every((t) => t.output.trim().length > 0), `${run}: an evidence tool answered nothing`);
      } else {
        assert.deepEqual(evidence, [], `${run}: evidence tools are not offered without the context`);
      }
    }
    const report = Report.parse(JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8')));
    assert.equal(report.counted, attempts.length);
    assert.ok(report.attempts.every((a) => a.similarity === 1), 'each verified patch is the reference fix');
    assert.match(stdout, new RegExp(`${ORACLE_MODEL} · context-augmented\\s+100% \\(${bugs.length}/${bugs.length}\\)`));
    assert.ok(!fs.readFileSync(path.join(out, 'records', 'bench.jsonl'), 'utf8').includes(KEY), 'the API key is never recorded');
    assert.deepEqual(liveHostProcesses(tmp), [], 'no node left behind');
  });
});
