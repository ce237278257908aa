import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readTrajectory } from '../../src/core/agent/trajectory';
import { ATTEMPTS_FILE, readRecordsFile, workspaceRecordsDir } from '../../src/core/study/store';
import { AGENT_BUGSET, call, COUNTER_BUG, openTestWorkspace } from '../support/agent-fixture';
import { startDdbenchBuilt, type RunningCli } from '../support/cli';
import { liveHostProcesses } from '../support/processes';
import { ScriptedOpenAIServer } from '../support/scripted-openai-server';

/** Scratch copies the harness makes in its temp folder (verify's and the agent's). */
const SCRATCH = /^ddbench-(scratch|agent)-/;

async function until(what: string, cli: RunningCli, ok: () => boolean): Promise<void> {
  while (!ok()) {
    if (cli.child.exitCode !== null) throw new Error(`ddbench exited before ${what}:\n${cli.stdout()}\n${cli.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Ctrl-C and SIGTERM on the real CLI, mid-run with live nodes: the first cancels (the
 * run stops, scratch copies go, the summary is printed, exit 130/143), a second quits at
 * once; no node outlives the harness either way.
 */
describe('signals: Ctrl-C and SIGTERM cancel a run and clean up (built CLI)', function () {
  this.timeout(180_000);
  let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
  let tmp: string;
  let server: ScriptedOpenAIServer | undefined;

  beforeEach(async () => {
    ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
    // The CLI's own temp folder, so every scratch copy it makes is seen, and only its.
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-signals-tmp-'));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    const left = liveHostProcesses(path.dirname(ws.dir));
    ws.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
    assert.deepEqual(left, [], 'node processes left behind');
  });

  const start = (args: string[]) => startDdbenchBuilt(args, { DDBENCH_BUGS: AGENT_BUGSET, TMPDIR: tmp });
  const nodesUp = () => liveHostProcesses(path.dirname(ws.dir)).length > 0;
  const scratchLeft = () => fs.readdirSync(tmp).filter((n) => SCRATCH.test(n));
  /** What the run left in its temp folder: only the registry's folder (with no run in it) and the simulation cache may stay. */
  const leftovers = () => [
    ...fs.readdirSync(tmp).filter((n) => n !== 'ddbench' && n !== 'ddbench-sim'),
    ...(fs.existsSync(path.join(tmp, 'ddbench', 'runs')) ? fs.readdirSync(path.join(tmp, 'ddbench', 'runs')) : []),
  ];

  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    it(`one ${signal} mid-verify: the run stops, the summary is printed, no scratch copy or node is left, exit ${code}`, async () => {
      assert.deepEqual(leftovers(), []);
      const cli = start(['verify', ws.dir, '--reference', '--trials', '20']);
      await until('its nodes started', cli, nodesUp);
      assert.ok(scratchLeft().length > 0, 'verify made no scratch copy in TMPDIR; the check below would prove nothing');
      cli.child.kill(signal);
      const r = await cli.done;
      assert.equal(r.code, code, r.stdout + r.stderr);
      assert.match(r.stderr, new RegExp(`${signal}: stopping the run`));
      assert.match(r.stderr, new RegExp(`interrupted by ${signal}; exit ${code}`));
      assert.match(r.stdout, /NOT VERIFIED: counter-double-add/);
      assert.match(r.stdout, /^runs: /m);
      assert.deepEqual(leftovers(), []);
      assert.deepEqual(liveHostProcesses(path.dirname(ws.dir)), []);
    });
  }

  it('a second SIGINT quits at once, without the summary, and still kills every node and removes the scratch copies', async () => {
    const cli = start(['verify', ws.dir, '--reference', '--trials', '20']);
    await until('its nodes started', cli, nodesUp);
    cli.child.kill('SIGINT');
    await until('the first SIGINT was handled', cli, () => /SIGINT: stopping the run/.test(cli.stderr()));
    cli.child.kill('SIGINT');
    const r = await cli.done;
    assert.equal(r.code, 130, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /^runs: /m, 'the run finished its cleanup before the second SIGINT; nothing was quit at once');
    assert.doesNotMatch(r.stderr, /interrupted by SIGINT; exit/);
    assert.deepEqual(liveHostProcesses(path.dirname(ws.dir)), []);
    // Scratch copies only: the cluster's socket folder (ddbench-XXXXXX, no source in it) is not removed on a quit at once.
    assert.deepEqual(scratchLeft(), [], 'quitting at once left a scratch copy (it holds the fixed source)');
  });

  it('SIGINT during an agent verification: exit 130, the run is recorded as interrupted, the agent copy is removed', async () => {
    server = await ScriptedOpenAIServer.start({
      replies: [
        call('propose_edit', { path: 'src/total.mjs', edits: [{ search: 'return total + amount * 2;', replace: 'return total + amount;' }] }),
        call('submit', { explanation: 'addTo doubled the amount' }),
      ],
    });
    const cli = start(['agent', ws.dir, '--model', 'scripted-model', '--base-url', server.url, '--trials', '20', '--regression-trials', '1']);
    await until('the verification started its nodes', cli, nodesUp);
    assert.ok(scratchLeft().some((n) => n.startsWith('ddbench-agent-')), "the agent's copy is not in TMPDIR; the check below would prove nothing");
    cli.child.kill('SIGINT');
    const r = await cli.done;
    assert.equal(r.code, 130, r.stdout + r.stderr);
    assert.match(r.stdout, /^NOT VERIFIED: counter-double-add .*stopped because the run was interrupted \(Ctrl-C or SIGTERM\) \(interrupted\)/m);
    assert.deepEqual(leftovers(), []);
    const { lines } = readRecordsFile(path.join(workspaceRecordsDir(ws.dir), ATTEMPTS_FILE));
    const attempts = lines.flatMap((x) => (x.type === 'attempt' ? [x] : []));
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0]?.status, 'interrupted');
    assert.equal(attempts[0]?.agent?.stopReason, 'interrupted');
    const trajectory = attempts[0]?.agent?.trajectory ?? '';
    const end = readTrajectory(trajectory).records.find((x) => x.type === 'end');
    assert.ok(end?.type === 'end' && end.result.stopReason === 'interrupted', 'the trajectory has no end record saying interrupted');
  });

  it('SIGINT during a bench: exit 130, the run in flight is not recorded (a rerun resumes it), its lock and copies are gone', async () => {
    server = await ScriptedOpenAIServer.start({
      replies: Array.from({ length: 4 }, (_, i) =>
        i % 2 === 0 ? call('propose_edit', { path: 'src/total.mjs', edits: [{ search: 'return total + amount * 2;', replace: 'return total + amount;' }] }) : call('submit', { explanation: 'addTo doubled the amount' }),
      ),
    });
    const out = path.join(path.dirname(ws.dir), 'bench-out');
    const cli = start(['bench', '--bugs', 'all', '--models', 'scripted-model', '--conditions', 'symptom-only', '--out', out, '--base-url', server.url, '--trials', '20']);
    const benchNodes = () => liveHostProcesses(out).length > 0;
    await until("the bench run's verification started its nodes", cli, benchNodes);
    cli.child.kill('SIGINT');
    const r = await cli.done;
    assert.equal(r.code, 130, r.stdout + r.stderr);
    assert.match(r.stderr, /bench: interrupted after 0 run\(s\) this time; nothing finished is lost — rerun the same command to resume/);
    const records = path.join(out, 'records', 'bench.jsonl');
    assert.equal(fs.existsSync(records) ? readRecordsFile(records).lines.length : 0, 0, 'the interrupted run was recorded, so a rerun would skip it');
    assert.ok(!fs.existsSync(path.join(out, 'bench.lock')), 'the bench lock was left');
    assert.deepEqual(leftovers(), []);
    assert.deepEqual(liveHostProcesses(out), []);
  });
});
