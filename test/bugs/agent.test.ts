import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runAgent } from '../../src/core/agent/agent';
import type { AgentSettingsInput } from '../../src/core/agent/config';
import { readTrajectory } from '../../src/core/agent/trajectory';
import { defaultBugsDir } from '../../src/core/bugs/catalog';
import { allText, call, KEY, lastMessage, openTestWorkspace } from '../support/agent-fixture';
import { liveHostProcesses } from '../support/processes';
import { ScriptedOpenAIServer, type RecordedRequest, type ScriptedReply } from '../support/scripted-openai-server';

const BUG = 'raftkv-lock-double-grant';

/**
 * The agent on a real bug of the set (RaftKV's lock granted twice, etcd#11456), with
 * live trials: the scripted model reads the code, submits a wrong patch, reads the
 * failing verdict, then submits the real fix, which is verified.
 */
describe('agent on a real bug (raftkv-lock-double-grant, live trials)', function () {
  this.timeout(15 * 60_000);
  let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
  let server: ScriptedOpenAIServer | undefined;

  beforeEach(async () => (ws = await openTestWorkspace(defaultBugsDir(), BUG)));
  afterEach(async () => {
    await server?.close();
    server = undefined;
    const left = liveHostProcesses(ws.dir);
    ws.dispose();
    assert.deepEqual(left, [], 'node processes left behind');
  });

  async function run(replies: (ScriptedReply | ((r: RecordedRequest) => ScriptedReply))[], settings: Partial<AgentSettingsInput>) {
    server = await ScriptedOpenAIServer.start({ apiKey: KEY, replies });
    // Two reproducer trials: the buggy code fails ~90% of trials, so a wrong patch passing both is a 1% chance.
    const result = await runAgent({ workspace: ws.dir, apiKey: KEY, settings: { baseUrl: server.url, model: 'scripted-model', trials: 2, regressionTrials: 1, ...settings } });
    if (server.failures[0]) throw server.failures[0];
    return { result, requests: server.requests };
  }

  it('fails a wrong patch with the reproducer\'s verdict, then verifies the real fix', async () => {
    const { result, requests } = await run(
      [
        call('search', { pattern: 'lock acquired' }),
        (req) => {
          assert.match(lastMessage(req), /^src\/v3lock\.js:\d+: this\.rt\.log\.info\('lock acquired'/m);
          return call('read_file', { path: 'src/v3lock.js', start_line: 33, end_line: 60 });
        },
        call('propose_edit', {
          path: 'src/v3lock.js',
          // Plausible but wrong: the key is always a string, so nothing changes.
          edits: [{ search: "      this.waiters.splice(this.waiters.indexOf(w), 1);\n      this.rt.log.info('lock acquired'", replace: "      this.waiters.splice(this.waiters.indexOf(w), 1);\n      if (!w.key) continue;\n      this.rt.log.info('lock acquired'" }],
        }),
        call('submit', { explanation: 'skip waiters without a key' }),
        (req) => {
          assert.match(lastMessage(req), /^Attempt 1: NOT VERIFIED\.\nreproducer lock-waiter-lease-expiry: [01]\/2 trials passed\n {2}trial \d+ \(seed \d+\): FAIL — invariant violated: mutual exclusion/);
          return call('propose_edit', {
            path: 'src/v3lock.js',
            edits: [{ search: '      if (!w.key) continue;', replace: "      if (!this.kv.get(w.key)) {\n        this.rt.log.info('lock lost', { name: w.name, key: w.key, rev: w.rev });\n        w.done({ ok: false, error: 'session expired' });\n        continue;\n      }" }],
          });
        },
        call('submit', { explanation: "a waiter whose key was revoked with its lease must not be granted the lock; answer 'session expired'" }),
      ],
      { condition: 'symptom-only' },
    );
    assert.equal(result.verified, true, `${result.stopReason} ${result.error ?? ''}`);
    assert.equal(result.attempts, 2);
    assert.equal(requests.length, 6);
    const reference = fs.readFileSync(path.join(defaultBugsDir(), 'raftkv', BUG, 'bug.patch'), 'utf8');
    for (const line of reference.split('\n').filter((l) => l.startsWith('-') && !l.startsWith('---'))) {
      assert.ok(result.patch?.includes(`+${line.slice(1)}`), `the verified patch restores "${line.slice(1).trim()}"`);
    }
    const attempts = readTrajectory(result.trajectory).records.flatMap((r) => (r.type === 'attempt' ? [r.attempt] : []));
    assert.deepEqual(attempts.map((a) => a.verified), [false, true]);
    assert.deepEqual(attempts[1]?.regression.map((g) => g.scenario), ['basic', 'failover']);
    assert.ok(!allText(ws.dir).includes(KEY));
  });

  it('context-augmented: the bundle and the evidence tools work on the real failure', async () => {
    let acquired = '';
    const { result, requests } = await run(
      [
        (req) => {
          const task = String(req.messages[1]!.content);
          assert.match(task, /## Debugging context\nCaptured from a run of the reproducer on the bug's original code — trial context \(lock-waiter-lease-expiry, seed \d\): FAIL/);
          assert.match(task, /Follow client-b's lease id through the timeline/);
          assert.match(task, /### Node state when the trial ended\nn1: \{/);
          return call('timeline', { text: 'lock acquired', kinds: ['log'] });
        },
        (req) => {
          const out = lastMessage(req);
          const ids = [...out.matchAll(/^#(\d+) .*lock acquired/gm)].map((m) => m[1]!);
          assert.ok(ids.length >= 2, `two grants on the timeline:\n${out}`);
          acquired = ids.at(-1)!;
          return call('happens_before', { event: acquired });
        },
        (req) => {
          const out = lastMessage(req);
          assert.match(out, new RegExp(`^event #${acquired} .*lock acquired`));
          assert.match(out, /causal past: \d+ events; the last on each node:\n(?: {2}#\d+ .*\n)+/);
          assert.match(out, /concurrent with it \(neither before nor after\): \d+ events/);
          return call('node_state', { node: 'n1' });
        },
        (req) => {
          assert.match(lastMessage(req), /"role"|"term"|"leader"/);
          return call('node_logs', { node: 'n2', text: 'lease', tail: true, limit: 5 });
        },
      ],
      { condition: 'context-augmented', limits: { maxSteps: 4 } },
    );
    assert.equal(result.stopReason, 'step-limit');
    assert.match(lastMessage(requests.at(-1)!), /lease|no events match/);
    assert.ok(result.totals.evidenceTokens > 1000);
  });
});
