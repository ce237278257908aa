import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readTrajectory } from '../../src/core/agent/trajectory';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { REDACTED } from '../../src/core/secrets';
import { runAgentAndRecord } from '../../src/core/study/agent';
import { readRecordsFile, workspaceRecordsDir, ATTEMPTS_FILE } from '../../src/core/study/store';
import { AGENT_BUGSET, allText, call, COUNTER_BUG, lastMessage, openTestWorkspace } from '../support/agent-fixture';
import { ddbenchBuilt } from '../support/cli';
import { liveHostProcesses } from '../support/processes';
import { ScriptedOpenAIServer, type RecordedRequest, type ScriptedServerOptions } from '../support/scripted-openai-server';

/** Recognisable, and never to be found in anything a run writes or shows. */
const KEY = 'sk-secrets-test-FAKE-KEY-3c1d5e7f9a';
const KEY_VAR = 'OPENAI_API_KEY';

/** A hostile edit: the node prints its whole environment (as an event field and as raw output) and the key. */
const logEnv = {
  path: 'src/node.mjs',
  edits: [
    {
      search: 'start() {',
      replace: [
        'start() {',
        "      rt.log.info('env', { env: process.env });",
        "      console.log('ENV ' + JSON.stringify(process.env));",
        `      rt.log.info('harness-key', { key: process.env.${KEY_VAR} ?? 'absent' });`,
      ].join('\n'),
    },
  ],
};
/** The model asks for the key's log line from the trial run_reproducer just reported. */
const askForKeyLog = (req: RecordedRequest) => call('node_logs', { node: 'n1', trial: /trial (\S+) \(/.exec(lastMessage(req))?.[1] ?? 'missing', text: 'harness-key' });
/** The right fix, with the key written into the code. */
const fixWithKey = { path: 'src/total.mjs', edits: [{ search: 'return total + amount * 2;', replace: `return total + amount; // ${KEY}` }] };

/** The built CLI as a user runs it, with the key in its environment. */
const ddbench = (args: string[], env: Record<string, string>) => ddbenchBuilt(args, { DDBENCH_BUGS: AGENT_BUGSET, [KEY_VAR]: KEY, ...env });

/** Every file under `dir` whose bytes hold `text`, as paths relative to it. */
function filesHolding(dir: string, text: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.readFileSync(p).includes(text)) out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

function countFiles(dir: string): number {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).length;
}

/**
 * The API key never reaches a node, a file or the output, with hostile patches and a
 * hostile endpoint: real clusters, the real client and verification; the scripted
 * OpenAI-compatible server is the only double.
 */
describe('secrets: the API key reaches no node, file or output', function () {
  this.timeout(240_000);
  let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
  let catalog: Catalog;
  let server: ScriptedOpenAIServer | undefined;
  const saved = { bugs: process.env.DDBENCH_BUGS, key: process.env[KEY_VAR] };

  before(async () => {
    catalog = await loadCatalog(AGENT_BUGSET);
    process.env.DDBENCH_BUGS = AGENT_BUGSET;
    // The harness holds the key in its environment, as in a user's shell.
    process.env[KEY_VAR] = KEY;
  });
  after(() => {
    for (const [name, value] of [['DDBENCH_BUGS', saved.bugs], [KEY_VAR, saved.key]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  beforeEach(async () => (ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG)));
  afterEach(async () => {
    await server?.close();
    server = undefined;
    const left = liveHostProcesses(ws.dir);
    ws.dispose();
    assert.deepEqual(left, [], 'node processes left behind');
  });

  async function serve(opts: ScriptedServerOptions): Promise<ScriptedOpenAIServer> {
    server = await ScriptedOpenAIServer.start(opts);
    return server;
  }

  function runInProcess(s: ScriptedOpenAIServer, condition: 'symptom-only' | 'context-augmented', maxSteps: number) {
    return runAgentAndRecord(
      {
        workspace: ws.dir,
        apiKey: KEY,
        settings: { baseUrl: s.url, model: 'scripted-model', condition, trials: 1, regressionTrials: 1, maxRetries: 0, limits: { maxSteps } },
      },
      { catalog },
    );
  }

  it('a patch that logs process.env on a live node finds no key in the events, and node_logs shows none', async () => {
    let logs = '';
    const s = await serve({
      apiKey: KEY,
      replies: [
        call('propose_edit', logEnv),
        call('run_reproducer', { trials: 1 }),
        askForKeyLog,
        (req) => {
          logs = lastMessage(req);
          return call('list_files', {});
        },
      ],
    });
    const { result } = await runInProcess(s, 'context-augmented', 4);
    if (s.failures[0]) throw s.failures[0];
    assert.equal(result.stopReason, 'step-limit', result.error);
    // Not merely redacted: the node never had the key.
    assert.match(logs, /harness-key \{"key":"absent"\}/);
    const events = filesHolding(ws.dir, 'DDBENCH_NODE_ID').filter((f) => f.endsWith('events.jsonl'));
    assert.ok(events.length > 0, 'no events file holds the logged environment');
    for (const f of events) assert.ok(!fs.readFileSync(path.join(ws.dir, f), 'utf8').includes(KEY_VAR), `${f} holds the harness's environment`);
    assert.deepEqual(filesHolding(ws.dir, KEY), []);
  });

  it('an endpoint that echoes the key in its error: the record, --json and stderr are redacted', async () => {
    const s = await serve({ replies: [{ status: 400, error: { message: `this key is not allowed here: ${KEY}`, type: 'invalid_request_error' } }] });
    const r = await ddbench(['agent', ws.dir, '--model', 'scripted-model', '--base-url', s.url, '--json'], {});
    assert.equal(r.code, 2, r.stderr);
    const out = JSON.parse(r.stdout) as { stopReason: string; error: string };
    assert.equal(out.stopReason, 'error');
    assert.ok(out.error.includes(`not allowed here: ${REDACTED}`), out.error);
    for (const text of [r.stdout, r.stderr]) assert.ok(!text.includes(KEY), 'the key was printed');
    const { lines } = readRecordsFile(path.join(workspaceRecordsDir(ws.dir), ATTEMPTS_FILE));
    const record = lines.find((l) => l.type === 'attempt');
    assert.ok(record?.type === 'attempt' && record.agent !== undefined);
    assert.match(record.agent.stopReason, /^error: .*not allowed here: \[redacted\]/);
    assert.deepEqual(filesHolding(ws.dir, KEY), []);
  });

  it('a patch containing the key: patch.diff, the attempt files, the record and the trajectory are redacted', async () => {
    const s = await serve({ replies: [call('propose_edit', fixWithKey), call('submit', { explanation: 'addTo doubled the amount' })] });
    const { result, record } = await runInProcess(s, 'symptom-only', 3);
    if (s.failures[0]) throw s.failures[0];
    assert.equal(result.verified, true, result.error);
    const runDir = path.dirname(result.trajectory);
    for (const file of ['patch.diff', 'attempt-1.diff']) assert.match(fs.readFileSync(path.join(runDir, file), 'utf8'), /^\+ {2}return total \+ amount; \/\/ \[redacted\]$/m, file);
    assert.match(record?.patch?.diff ?? '', /\/\/ \[redacted\]$/m);
    assert.ok(readTrajectory(result.trajectory).records.some((r) => r.type === 'attempt' && r.attempt.patch.includes(`// ${REDACTED}`)));
    assert.deepEqual(filesHolding(ws.dir, KEY), []);
  });

  it('`ddbench agent` with every hostile input writes the key into no file it creates, and prints it nowhere', async () => {
    // The run's temporary folders (scratch copies, the simulation cache) and home are its own here, so all can be searched.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-secrets-tmp-'));
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-secrets-home-'));
    let logs = '';
    try {
      const s = await serve({
        apiKey: KEY,
        replies: [
          { status: 500, error: { message: `upstream failed for ${KEY}` }, headers: { 'retry-after': '0' } },
          call('propose_edit', logEnv),
          call('propose_edit', fixWithKey),
          call('run_reproducer', { trials: 1 }),
          askForKeyLog,
          (req) => {
            logs = lastMessage(req);
            return call('submit', { explanation: 'addTo doubled the amount' });
          },
        ],
      });
      const r = await ddbench(['agent', ws.dir, '--model', 'scripted-model', '--base-url', s.url, '--condition', 'context-augmented', '--trials', '1', '--regression-trials', '1'], { TMPDIR: tmp, HOME: home });
      if (s.failures[0]) throw s.failures[0];
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /^VERIFIED: /m);
      assert.match(logs, /harness-key \{"key":"absent"\}/);
      // The simulation cache holds the verified (patched) source: it is among what is searched.
      assert.ok(countFiles(ws.dir) > 10 && countFiles(path.join(tmp, `ddbench-${process.getuid?.() ?? ''}`, 'sim')) > 0, 'the run wrote where it is searched');
      assert.ok(allText(ws.dir).includes(REDACTED), 'the key was never met, so redaction was not tested');
      for (const [where, dir] of [['workspace', ws.dir], ['temp', tmp], ['home', home]] as const) assert.deepEqual(filesHolding(dir, KEY), [], `${where} files hold the key`);
      for (const text of [r.stdout, r.stderr]) assert.ok(!text.includes(KEY), 'the key was printed');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
