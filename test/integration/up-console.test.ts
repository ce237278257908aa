import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENT_BUGSET, COUNTER_BUG, openTestWorkspace } from '../support/agent-fixture';
import { startDdbenchBuilt, type RunningCli } from '../support/cli';
import { liveHostProcesses } from '../support/processes';

async function until(what: string, cli: RunningCli, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!ok()) {
    if (cli.child.exitCode !== null) throw new Error(`ddbench exited before ${what}:\n${cli.stdout()}\n${cli.stderr()}`);
    if (Date.now() > deadline) throw new Error(`no ${what} in 60 s:\n${cli.stdout()}\n${cli.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `ddbench up` takes typed requests on stdin, checks them against system.json, and puts them on the timeline. */
describe('ddbench up: a cluster you can talk to (built CLI, live node)', function () {
  this.timeout(120_000);
  let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
  beforeEach(async () => {
    ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
  });
  afterEach(() => {
    const left = liveHostProcesses(path.dirname(ws.dir));
    ws.dispose();
    assert.deepEqual(left, [], 'node processes left behind');
  });

  it('answers a request, refuses a bad one in a sentence, and records the exchange as messages', async () => {
    const cli = startDdbenchBuilt(['up', ws.dir, '--quiet'], { DDBENCH_BUGS: AGENT_BUGSET });
    let r: Awaited<RunningCli['done']>;
    try {
      await until('the prompt', cli, () => cli.stdout().includes('Type a request'));
      cli.child.stdin?.write('n1 Add amount=lots\n');
      await until('the refusal', cli, () => cli.stdout().includes('request not sent'));
      assert.match(cli.stdout(), /request not sent: amount is a number; "lots" is not one/);
      cli.child.stdin?.write('n1 Add amount=5\nn1 Add amount=2\n');
      await until('two replies', cli, () => (cli.stdout().match(/← n1 Add/g) ?? []).length === 2);
      // The workspace holds the bug (it adds twice), so only the shape of the reply is fixed.
      assert.match(cli.stdout(), /← n1 Add \(\d+ ms\): \{"reqId":"console:2","total":\d+\}/);
    } finally {
      cli.child.kill('SIGINT');
      r = await cli.done;
    }
    assert.equal(r.code, 0, r.stderr);
    const events = fs
      .readFileSync(/events: (\S+)/.exec(r.stdout)![1]!, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; node: string; peer?: string });
    assert.equal(events.filter((e) => e.kind === 'send' && e.node === 'console' && e.peer === 'n1').length, 2, 'the console is a lane of its own, its requests are messages');
    assert.equal(events.filter((e) => e.kind === 'recv' && e.node === 'console').length, 2);
  });
});
