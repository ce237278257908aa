import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { readEventsFile } from '../../src/core/events/read';
import { bwrapProgram, localIsolation, nodePermissionFlags } from '../../src/core/sandbox/isolation';
import { verificationOf } from '../../src/core/study/verification';
import { runReproducer } from '../../src/core/verify/reproduce';
import { verifyFix } from '../../src/core/verify/verify';
import type { BackendOptions } from '../../src/core/cluster/backend';
import { dockerOrSkip } from '../support/docker';
import { AGENT_BUGSET, COUNTER_BUG, openTestWorkspace } from '../support/agent-fixture';

/** The correct helper, inside the bug set, which a delegating patch goes looking for. */
const CORRECT_TOTAL = path.join(AGENT_BUGSET, 'counter', 'src', 'total.mjs');

/**
 * A hostile patch (named as such): instead of fixing addTo it finds the bug set —
 * through DDBENCH_BUGS, by walking up from the live host's path, or at the path it
 * happens to know — and delegates to the correct source there. Without isolation this
 * "fixes" the bug.
 */
const DELEGATING_TOTAL = `import fs from 'node:fs';
import path from 'node:path';
const candidates = [];
if (process.env.DDBENCH_BUGS) candidates.push(path.join(process.env.DDBENCH_BUGS, 'counter', 'src', 'total.mjs'));
for (let d = path.dirname(process.argv[1] ?? '/'); d !== path.dirname(d); d = path.dirname(d)) {
  candidates.push(path.join(d, 'test', 'fixtures', 'agent-bugset', 'counter', 'src', 'total.mjs'));
}
candidates.push(${JSON.stringify(CORRECT_TOTAL)});
let correct;
for (const c of candidates) {
  try {
    if (fs.existsSync(c)) { correct = (await import(c)).addTo; break; }
  } catch {}
}
export function addTo(total, amount) {
  return correct ? correct(total, amount) : total + amount * 2;
}
`;

/**
 * A hostile node (named as such): at start it writes outside its folders, reads the bug
 * set, connects to a port on the host and starts a detached process that keeps the
 * node's output open, and logs what worked.
 */
function escapingNode(token: string, port: number): string {
  return `import fs from 'node:fs';
import net from 'node:net';
import cp from 'node:child_process';
import { addTo } from './total.mjs';

const attempt = (fn) => { try { fn(); return 'done'; } catch (e) { return 'refused: ' + (e.code ?? e.message); } };

export function createNode(rt) {
  let total = 0;
  return {
    start() {
      const outcome = {
        write: attempt(() => fs.writeFileSync(${JSON.stringify(path.join(os.tmpdir(), `ddbench-escape-${token}`))}, 'x')),
        read: attempt(() => fs.readFileSync(${JSON.stringify(CORRECT_TOTAL)}, 'utf8')),
        spawn: attempt(() => cp.spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', ${JSON.stringify(token)}], { detached: true, stdio: 'inherit' }).unref()),
      };
      const socket = net.connect(${port}, '127.0.0.1');
      const connect = new Promise((resolve) => {
        socket.on('connect', () => resolve('done'));
        socket.on('error', (e) => resolve('refused: ' + e.code));
      }).then((result) => rt.log.info('escape connect', { connect: result }));
      rt.log.info('escape', outcome);
      rt.exposeState(() => ({ total }));
      rt.onMessage((m) => {
        if (m.type !== 'Add') return;
        // Answer only once the connection attempt is logged, so the trial cannot end before it.
        void connect.then(() => {
          total = addTo(total, m.body.amount);
          rt.send(m.from, 'AddResp', { reqId: m.body.reqId, total });
        });
      });
    },
  };
}
`;
}

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/** Pids of processes whose command line holds `token`. */
function processesHolding(token: string): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(token)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** What the hostile node logged about each attempt, from the trial's events. */
async function outcomes(eventsFile: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of (await readEventsFile(eventsFile)).events) {
    if (e.kind === 'log' && (e.msg === 'escape' || e.msg === 'escape connect')) Object.assign(out, e.fields);
  }
  return out;
}

describe('sandbox: submitted code cannot reach the bug set, the machine or outlive its run', function () {
  this.timeout(180_000);
  let catalog: Catalog;
  const saved = { isolation: process.env.DDBENCH_ISOLATION, bugs: process.env.DDBENCH_BUGS };

  before(async function () {
    if (process.platform !== 'linux') this.skip();
    catalog = await loadCatalog(AGENT_BUGSET);
    // The harness knows where the bug set is, as a user's shell would.
    process.env.DDBENCH_BUGS = AGENT_BUGSET;
  });
  afterEach(() => restore('DDBENCH_ISOLATION', saved.isolation));
  after(() => restore('DDBENCH_BUGS', saved.bugs));

  async function delegatingVerdict(isolation: string, backend: BackendOptions = { backend: 'process' }): Promise<{ verified: boolean; isolation: unknown }> {
    process.env.DDBENCH_ISOLATION = isolation === 'docker' ? '' : isolation;
    const ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
    try {
      fs.writeFileSync(path.join(ws.dir, 'src', 'total.mjs'), DELEGATING_TOTAL);
      const r = await verifyFix(ws.dir, { kind: 'workspace' }, { catalog, sim: false, trials: 1, backend });
      // The record of the verification claims no more isolation than its runs had.
      assert.equal(verificationOf(r, new Date(), new Date()).isolation, isolation);
      return { verified: r.verified, isolation: r.trials[0]?.isolation };
    } finally {
      ws.dispose();
    }
  }

  it('control: without isolation the delegating patch does get verified (the exploit is real)', async () => {
    const r = await delegatingVerdict('none');
    assert.deepEqual(r, { verified: true, isolation: 'none' });
  });

  it('under bubblewrap the delegating patch is not verified, and the verdict says bwrap', async function () {
    if (bwrapProgram() === undefined) this.skip();
    assert.deepEqual(await delegatingVerdict('bwrap'), { verified: false, isolation: 'bwrap' });
  });

  it("under Node's permission model alone the delegating patch is not verified either", async function () {
    if (nodePermissionFlags() === undefined) this.skip();
    assert.deepEqual(await delegatingVerdict('node-permission'), { verified: false, isolation: 'node-permission' });
  });

  it('on the docker backend the delegating patch is not verified, and the verdict says docker', async function () {
    this.timeout(600_000);
    await dockerOrSkip(this);
    assert.deepEqual(await delegatingVerdict('docker', { backend: 'docker' }), { verified: false, isolation: 'docker' });
  });

  it('refuses to verify when a study requires more isolation than this machine gives', async () => {
    process.env.DDBENCH_ISOLATION = 'none';
    const ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
    try {
      fs.writeFileSync(path.join(ws.dir, 'src', 'total.mjs'), DELEGATING_TOTAL);
      await assert.rejects(verifyFix(ws.dir, { kind: 'workspace' }, { catalog, sim: false, trials: 1, requireIsolation: 'bwrap' }), /requires isolation bwrap, but runs here get none/);
    } finally {
      ws.dispose();
    }
  });

  for (const isolation of ['bwrap', 'node-permission'] as const) {
    it(`under ${isolation}, a node that writes outside, reads the bug set, connects out and forks does none of it and leaves nothing running`, async function () {
      if (isolation === 'bwrap' ? bwrapProgram() === undefined : nodePermissionFlags() === undefined) this.skip();
      process.env.DDBENCH_ISOLATION = isolation;
      const token = `ddbench-sandbox-test-${randomBytes(6).toString('hex')}`;
      let connections = 0;
      const listener = net.createServer((s) => {
        connections++;
        s.destroy();
      });
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      const port = (listener.address() as net.AddressInfo).port;
      const ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
      try {
        fs.writeFileSync(path.join(ws.dir, 'src', 'node.mjs'), escapingNode(token, port));
        const r = await runReproducer(ws.dir, { sim: false, trials: 1 });
        const trial = r.trials[0];
        assert.ok(trial !== undefined);
        assert.equal(trial.isolation, isolation);
        const seen = await outcomes(trial.eventsFile);
        assert.match(seen.write ?? '', /^refused/, 'the write outside was refused');
        assert.match(seen.read ?? '', /^refused/, 'the bug set could not be read');
        assert.equal(fs.existsSync(path.join(os.tmpdir(), `ddbench-escape-${token}`)), false);
        if (isolation === 'bwrap') {
          // Outside Node's model the fork itself may work, but only inside the node's PID namespace.
          assert.match(seen.connect ?? '', /^refused/, 'the connection out was refused');
          assert.equal(connections, 0);
        } else {
          assert.match(seen.spawn ?? '', /^refused/, 'the child process was refused');
        }
        assert.deepEqual(processesHolding(token), [], 'no process the node started outlives the run');
      } finally {
        listener.close();
        ws.dispose();
      }
    });
  }

  it('without isolation, a detached process holding the node output does not hang the run', async () => {
    process.env.DDBENCH_ISOLATION = 'none';
    const token = `ddbench-sandbox-test-${randomBytes(6).toString('hex')}`;
    const ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
    try {
      fs.writeFileSync(path.join(ws.dir, 'src', 'node.mjs'), escapingNode(token, 9));
      const r = await runReproducer(ws.dir, { sim: false, trials: 1 });
      assert.equal(r.trials[0]?.verdict, 'fail', 'the buggy counter still fails, with a verdict');
      assert.equal(localIsolation(), 'none');
    } finally {
      // Nothing contains it here: that is what isolation is for; the test cleans up after itself.
      for (const pid of processesHolding(token)) process.kill(pid, 'SIGKILL');
      ws.dispose();
    }
  });
});
