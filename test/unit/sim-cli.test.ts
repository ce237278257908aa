import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { commandReplay } from '../../src/cli/commands/replay';
import { commandSim } from '../../src/cli/commands/sim';
import { EXIT } from '../../src/cli/output';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { openWorkspace } from '../../src/core/bugs/workspace';
import { readEventsFile } from '../../src/core/events/read';
import { localIsolation } from '../../src/core/sandbox/isolation';
import { tempDir } from '../support/bugset';

/** Runs a command in this process and captures what it prints. */
async function capture(body: () => Promise<number>): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const write = { out: process.stdout.write, err: process.stderr.write };
  process.stdout.write = ((chunk: string | Uint8Array) => out.push(String(chunk)) > 0) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => err.push(String(chunk)) > 0) as typeof process.stderr.write;
  try {
    const code = await body();
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    process.stdout.write = write.out;
    process.stderr.write = write.err;
  }
}

describe('simulation: ddbench sim and replay', function () {
  this.timeout(5 * 60_000);
  const tmp = tempDir('ddbench-sim-cli-');
  let ws: string;

  before(async () => {
    ws = await openWorkspace(await loadCatalog(), 'raftkv-lock-double-grant', path.join(tmp.dir, 'ws'));
  });
  after(() => tmp.dispose());

  it('runs seeds, reports the failing ones and exits 1', async () => {
    const json = await capture(() => commandSim(ws, { seeds: 3, json: true }));
    assert.equal(json.code, EXIT.failed);
    const r = JSON.parse(json.stdout) as { seedsRun: number; failedSeeds: number[]; firstFailingSeed: number; seedsPerSecond: number; scenario: string; isolation: string };
    assert.equal(r.isolation, localIsolation());
    assert.equal(r.scenario, 'lock-waiter-lease-expiry');
    assert.equal(r.seedsRun, 3);
    assert.deepEqual(r.failedSeeds, [1, 2, 3]);
    assert.equal(r.firstFailingSeed, 1);
    assert.ok(r.seedsPerSecond > 0);
    const human = await capture(() => commandSim(ws, { seeds: 2, from: 10, stopAtFirst: true, checkDeterminism: true }));
    assert.equal(human.code, EXIT.failed);
    assert.match(human.stdout, /seeds run: 1 \(10\.\.10\)/);
    assert.match(human.stdout, /first failing seed: 10 — fail: invariant violated: mutual exclusion/);
    assert.match(human.stdout, /seeds per second: /);
    assert.match(human.stdout, /isolation: (bwrap|node-permission|none) /);
    assert.match(human.stdout, /determinism: every seed ran twice with byte-identical events/);
    assert.match(human.stdout, /ddbench replay .* --seed 10/);
  });

  it('exits 0 when every seed passes (a regression scenario the bug leaves alone)', async () => {
    const r = await capture(() => commandSim(ws, { seeds: 2, scenario: 'failover' }));
    assert.equal(r.code, EXIT.ok, r.stdout + r.stderr);
    assert.match(r.stdout, /failed seeds: 0/);
  });

  it('replays a seed into the workspace runs and prints where it failed, the same bytes every time', async () => {
    const first = await capture(() => commandReplay(ws, { seed: 2 }));
    assert.equal(first.code, EXIT.failed);
    assert.match(first.stdout, /replayed seed 2 of lock-waiter-lease-expiry \(raftkv-lock-double-grant\): FAIL at [\d.]+ s virtual/);
    assert.match(first.stdout, /Where it failed: mutual exclusion: B and C are not both granted the lock/);
    assert.match(first.stdout, /The last events before it:/);
    const eventsFile = path.join(ws, '.ddbench', 'runs', 'replay-seed-2', 'events.jsonl');
    const bytes = fs.readFileSync(eventsFile);
    const { events, bad } = await readEventsFile(eventsFile);
    assert.deepEqual(bad, []);
    assert.ok(events.some((e) => e.kind === 'check' && e.fields?.ok === false && e.msg === 'mutual exclusion: B and C are not both granted the lock'));
    const trial = JSON.parse(fs.readFileSync(path.join(path.dirname(eventsFile), 'trial.json'), 'utf8')) as { verdict: string; simulated: boolean };
    assert.deepEqual([trial.verdict, trial.simulated], ['fail', true]);

    await capture(() => commandReplay(ws, { seed: 2 }));
    assert.ok(fs.readFileSync(eventsFile).equals(bytes), 'a second replay wrote the same bytes');
    const out = path.join(tmp.dir, 'again', 'events.jsonl');
    await capture(() => commandReplay(ws, { schedule: path.join(path.dirname(eventsFile), 'schedule.json'), out }));
    assert.ok(fs.readFileSync(out).equals(bytes), 'replaying its schedule.json wrote the same bytes');
  });

  it('shrinks a failing seed on request', async () => {
    const r = await capture(() => commandSim(ws, { seeds: 1, shrink: true }));
    assert.match(r.stdout, /Shrunk schedule of seed 1 \(\d+ runs, 1-minimal\)/);
    assert.match(r.stdout, /non-default scheduler decisions: \d+ -> \d+/);
  });

  it('asks for a seed', async () => {
    await assert.rejects(commandReplay(ws, {}), /give the seed to replay/);
  });
});
