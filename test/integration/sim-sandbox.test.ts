import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultBugsDir, findSystem, loadCatalog, miniatureEntry, type SystemEntry } from '../../src/core/bugs/catalog';
import { materialiseBuggySource } from '../../src/core/bugs/workspace';
import type { Event } from '../../src/core/events/event';
import { localIsolation } from '../../src/core/sandbox/isolation';
import type { Isolation } from '../../src/core/sandbox/levels';
import { replaySeed, shrinkSeed, simulateSeeds } from '../../src/core/sim/sandboxed';
import { simulate } from '../../src/core/verify/simulate';
import { tempDir, writeFiles } from '../support/bugset';

// Hostile code under simulation: each system below is one a patch could submit.

function fixtureSystem(dir: string): SystemEntry {
  return {
    id: 'hostile',
    kind: 'miniature',
    dir,
    manifest: { id: 'hostile', name: 'hostile', description: 'a hostile patch', modelledAfter: { project: 'x', url: 'https://example.org' }, entry: 'node.mjs', client: [], nodes: ['n1', 'n2', 'n3'], config: {}, tests: [] },
  };
}

/** n3 keeps the order of the writes n1 and n2 send it; the scenario passes when n3 answers. */
const SCENARIO = `export default {
  name: 'both-writes',
  description: 'n3 answers with the writes it got.',
  timeoutMs: 1000,
  async run(t) {
    await t.sleep(500);
    const state = await t.state('n3');
    t.check('n3 answers', Array.isArray(state.order), { order: state.order });
  },
};
`;

const RACE = `
  const order = [];
  const node = {
    start() {
      rt.exposeState(() => ({ order }));
      rt.onMessage((m) => { HANDLER; if (m.type === 'write') order.push(m.from); });
      if (rt.id !== 'n3') rt.send('n3', 'write', { from: rt.id });
    },
  };`;

/** A system whose createNode tries to read the bug set, write outside, and leave a process behind, and logs how each went. */
function hostileModule(marker: string, sleepArg: string): string {
  return `import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
const BUGS = ${JSON.stringify(defaultBugsDir())};
function attempt(fn) { try { return fn(); } catch (e) { return 'refused: ' + (e.code ?? e.message); } }
function walkUp(from) {
  for (let dir = path.dirname(from); ; dir = path.dirname(dir)) {
    for (const name of ['bugs', 'raftkv']) {
      const probe = path.join(dir, name, name === 'bugs' ? 'raftkv/system.json' : 'system.json');
      if (attempt(() => fs.existsSync(probe)) === true) return 'found ' + probe;
    }
    if (path.dirname(dir) === dir) return 'not found';
  }
}
export function createNode(rt) {
  const outcomes = {
    env: process.env.DDBENCH_BUGS ?? 'absent',
    bugs: attempt(() => fs.readFileSync(path.join(BUGS, 'raftkv', 'system.json'), 'utf8').length + ' bytes read'),
    argv: attempt(() => walkUp(process.argv[1] ?? '/')),
    url: attempt(() => walkUp(fileURLToPath(import.meta.url))),
    write: attempt(() => { fs.writeFileSync(${JSON.stringify(marker)}, 'planted'); return 'written'; }),
    spawn: attempt(() => { const c = spawn('sleep', [${JSON.stringify(sleepArg)}], { detached: true, stdio: 'ignore' }); c.on('error', () => {}); c.unref(); return 'spawned'; }),
  };
  ${RACE.replace('HANDLER', '')}
  const start = node.start;
  node.start = () => { rt.log.info('hostile', outcomes); start(); };
  return node;
}
`;
}

/** Live processes whose command line holds `arg`. */
function processesWith(arg: string): number[] {
  const found: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(arg)) found.push(Number(pid));
    } catch {
      // gone
    }
  }
  return found;
}

/** The isolation levels this machine offers besides none, strongest first. */
function sandboxLevels(): Isolation[] {
  const best = localIsolation({});
  return best === 'bwrap' ? ['bwrap', 'node-permission'] : best === 'node-permission' ? ['node-permission'] : [];
}

function withIsolation<T>(level: Isolation, work: () => Promise<T>): Promise<T> {
  const before = process.env.DDBENCH_ISOLATION;
  process.env.DDBENCH_ISOLATION = level;
  return work().finally(() => {
    if (before === undefined) delete process.env.DDBENCH_ISOLATION;
    else process.env.DDBENCH_ISOLATION = before;
  });
}

describe('simulation: submitted code runs in a sandboxed child', function () {
  this.timeout(5 * 60_000);
  let tmp: ReturnType<typeof tempDir>;

  beforeEach(() => {
    tmp = tempDir('ddbench-sim-sandbox-');
  });
  afterEach(() => tmp.dispose());

  function system(node: string): SystemEntry {
    const dir = path.join(tmp.dir, `system-${randomBytes(4).toString('hex')}`);
    writeFiles(dir, { 'node.mjs': node, 'scenarios/both-writes.mjs': SCENARIO });
    return fixtureSystem(dir);
  }

  for (const level of sandboxLevels()) {
    it(`(${level}) a hostile system reads no bug set, writes nothing outside and leaves no process, in search and replay`, async () => {
      const marker = path.join(os.tmpdir(), `ddbench-hostile-${randomBytes(6).toString('hex')}`);
      const sleepArg = `${600 + Math.floor(Math.random() * 1000)}.${randomBytes(3).readUIntBE(0, 3)}`;
      const sys = system(hostileModule(marker, sleepArg));
      await withIsolation(level, async () => {
        const search = await simulateSeeds(sys, sys.dir, 'both-writes', { seeds: 4, concurrency: 2 });
        assert.equal(search.isolation, level);
        assert.deepEqual(search.failedSeeds, [], search.firstFailure?.reason);
        const eventsFile = path.join(tmp.dir, 'replay', 'events.jsonl');
        const replay = await replaySeed(sys, sys.dir, 'both-writes', 1, { eventsFile });
        assert.equal(replay.isolation, level);
        const events = fs.readFileSync(eventsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Event);
        const outcomes = events.filter((e) => e.msg === 'hostile').map((e) => e.fields ?? {});
        assert.equal(outcomes.length, 3, 'every node logged its attempts');
        for (const o of outcomes) {
          assert.equal(o.env, 'absent');
          assert.match(String(o.bugs), /^refused: /);
          assert.equal(o.argv, 'not found');
          assert.equal(o.url, 'not found');
          assert.match(String(o.spawn), /^refused: /);
        }
      });
      assert.equal(fs.existsSync(marker), false, 'a file was written outside the sandbox');
      assert.deepEqual(processesWith(sleepArg), [], 'a process outlived the simulation');
    });

    it(`(${level}) the delegating patch, which imports the correct source from the bug set, does not pass`, async function () {
      const { buggyDir, delegating, raftkv, scenario } = await delegatingPatch();
      await withIsolation(level, async () => {
        await assert.rejects(simulate(raftkv, delegating, scenario, { seeds: 3 }), /cannot load the system/);
        // The buggy code itself runs in the same sandbox: it is the import that fails.
        assert.equal((await simulate(raftkv, buggyDir, scenario, { seeds: 1 })).isolation, level);
      });
    });
  }

  it('without a sandbox (DDBENCH_ISOLATION=none) the delegating patch passes: what the tests above guard against', async () => {
    const { delegating, raftkv, scenario } = await delegatingPatch();
    const r = await withIsolation('none', () => simulate(raftkv, delegating, scenario, { seeds: 3 }));
    assert.equal(r.isolation, 'none');
    assert.equal(r.failed, 0);
  });

  async function delegatingPatch(): Promise<{ buggyDir: string; delegating: string; raftkv: SystemEntry; scenario: string }> {
    const catalog = await loadCatalog();
    const raftkv = findSystem(catalog, 'raftkv');
    const bug = catalog.bugs.find((b) => b.system === raftkv.id)!;
    const buggyDir = path.join(tmp.dir, 'buggy');
    materialiseBuggySource(raftkv, bug, buggyDir);
    const delegating = path.join(tmp.dir, 'delegating');
    fs.cpSync(buggyDir, delegating, { recursive: true });
    const correct = path.join(raftkv.dir, miniatureEntry(raftkv.manifest));
    fs.writeFileSync(path.join(delegating, miniatureEntry(raftkv.manifest)), `export * from ${JSON.stringify(correct)};\n`);
    return { buggyDir, delegating, raftkv, scenario: bug.manifest.reproducer.scenario };
  }

  it('a seed whose handler loops forever gets verdict timeout, and the search finishes', async () => {
    // Seeds whose first message draws low spin for ever; the rest pass.
    const sys = system(`export function createNode(rt) {${RACE.replace('HANDLER', 'if (rt.id === "n3" && rt.random() < 0.5) for (;;) {}')}\n  return node;\n}\n`);
    const r = await simulateSeeds(sys, sys.dir, 'both-writes', { seeds: 8, concurrency: 2, limits: { wallMs: 1500 } });
    assert.equal(r.seedsRun, 8);
    assert.ok(r.verdicts.timeout > 0 && r.verdicts.pass > 0, JSON.stringify(r.verdicts));
    assert.match(r.firstFailure?.reason ?? '', /wall-time budget of 1500 ms/);
  });

  it('a seed that allocates without bound gets verdict timeout (memory), and the search finishes', async () => {
    const sys = system(`export function createNode(rt) {${RACE.replace('HANDLER', 'if (rt.id === "n3" && rt.random() < 0.5) { const hoard = []; for (;;) hoard.push(new Array(100000).fill(hoard.length)); }')}\n  return node;\n}\n`);
    const r = await simulateSeeds(sys, sys.dir, 'both-writes', { seeds: 6, concurrency: 2, limits: { heapMb: 64, wallMs: 120_000 } });
    assert.equal(r.seedsRun, 6);
    assert.ok(r.verdicts.timeout > 0 && r.verdicts.pass > 0, JSON.stringify(r.verdicts));
    assert.match(r.firstFailure?.reason ?? '', /memory budget of 64 MB/);
  });

  it('a system that loops as its module loads fails the search with the load budget named, and hangs nothing', async () => {
    const sys = system(`for (;;) {}\nexport function createNode() { return { start() {} }; }\n`);
    await assert.rejects(simulateSeeds(sys, sys.dir, 'both-writes', { seeds: 2, concurrency: 1 }), /the system did not load within 10000 ms/);
  });

  it('a replay or shrink stuck in a loop is killed at the overall wall limit, with an error naming it', async () => {
    const sys = system(`export function createNode(rt) {${RACE.replace('HANDLER', 'if (rt.id === "n3") for (;;) {}')}\n  return node;\n}\n`);
    await assert.rejects(replaySeed(sys, sys.dir, 'both-writes', 1, { eventsFile: path.join(tmp.dir, 'r', 'events.jsonl'), wallMs: 2000 }), /overall wall-time limit/);
    await assert.rejects(shrinkSeed(sys, sys.dir, 'both-writes', 1, { maxRuns: 1, wallMs: 2000 }), /overall wall-time limit/);
  });
});
