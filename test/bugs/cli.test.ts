import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { packageRoot } from '../../src/core/paths';
import { liveHostProcesses } from '../support/processes';

const cli = path.join(packageRoot(), 'bin', 'ddbench.js');

let tmp: string;

/** Runs the CLI with its temp folder (scratch copies, demo workspace) inside this suite's folder. */
function ddbench(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, TMPDIR: tmp }, timeout: 10 * 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The CLI as a user runs it: real processes, real clusters, exit codes and JSON. */
describe('ddbench CLI', function () {
  this.timeout(10 * 60_000);
  let firstBug: string;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-cli-'));
    const c = await loadCatalog();
    firstBug = c.bugs.filter((b) => b.kind === 'miniature').sort((a, b) => a.tier - b.tier || a.id.localeCompare(b.id))[0]!.id;
  });
  after(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  afterEach(() => {
    assert.deepEqual(liveHostProcesses(tmp), [], 'node processes left behind');
  });

  it('lists the catalogue as JSON and as a table', () => {
    const json = ddbench(['bugs', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as { bugs: { id: string; tier: number; modelledAfter: { fix: { url: string }; status: string; mechanism: string } }[] };
    assert.ok(parsed.bugs.some((b) => b.id === firstBug));
    for (const b of parsed.bugs) assert.ok(b.modelledAfter.fix.url && b.modelledAfter.status && b.modelledAfter.mechanism, `${b.id}: the upstream fix, status and mechanism`);
    const table = ddbench(['bugs']);
    assert.match(table.stdout, new RegExp(`^${firstBug}\\s`, 'm'));
  });

  it('opens a workspace, reproduces the bug with evidence (exit 1) and verifies the reference fix (exit 0)', () => {
    const ws = path.join(tmp, 'ws');
    const open = ddbench(['open', firstBug, '--dir', ws]);
    assert.equal(open.code, 0, open.stderr);
    assert.equal(open.stdout.trim(), ws);

    const repro = ddbench(['repro', ws, '--trials', '3', '--json']);
    assert.equal(repro.code, 1, repro.stderr);
    const r = JSON.parse(repro.stdout) as { trials: { seed: number; verdict: string; durationMs: number; eventsFile: string; violation?: { check: string } }[]; passed: number; failed: number };
    assert.equal(r.trials.length, 3);
    assert.ok(r.failed >= 1);
    const failed = r.trials.find((t) => t.verdict === 'fail')!;
    assert.ok(failed.violation?.check, 'a failing trial names its violated invariant');
    assert.ok(fs.statSync(failed.eventsFile).size > 0, 'a failing trial keeps its events');

    const human = ddbench(['repro', ws, '--trials', '1']);
    assert.equal(human.code, 1);
    assert.match(human.stdout, /Evidence from trial 1 \(seed \d+\)/);

    const verify = ddbench(['verify', ws, '--reference', '--trials', '3', '--json']);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const v = JSON.parse(verify.stdout) as { verified: boolean; passed: number; trials: unknown[] };
    assert.equal(v.verified, true);
    assert.equal(v.passed, 3);
  });

  it('verifies a patch file and the workspace\'s own changes, never touching the workspace', () => {
    const ws = path.join(tmp, 'ws2');
    assert.equal(ddbench(['open', firstBug, '--dir', ws]).code, 0);
    const noChanges = ddbench(['verify', ws, '--trials', '1']);
    assert.equal(noChanges.code, 2);
    assert.match(noChanges.stderr, /no changes/);
    const garbage = path.join(tmp, 'garbage.patch');
    fs.writeFileSync(garbage, '--- a/src/nope.js\n+++ b/src/nope.js\n@@ -1 +1 @@\n-a\n+b\n');
    const bad = ddbench(['verify', ws, '--patch', garbage, '--trials', '1']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /src\/nope\.js: file does not exist/);
    const issue = fs.readFileSync(path.join(ws, 'ISSUE.md'), 'utf8');
    const missing = ddbench(['verify', ws, '--patch', path.join(tmp, 'missing.patch')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read patch/);
    assert.equal(fs.readFileSync(path.join(ws, 'ISSUE.md'), 'utf8'), issue);
  });

  it('explains bad input', () => {
    const unknown = ddbench(['open', 'no-such-bug', '--dir', path.join(tmp, 'x')]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no bug "no-such-bug".*known bugs/);
    const notWs = ddbench(['repro', tmp]);
    assert.equal(notWs.code, 2);
    assert.match(notWs.stderr, /not a DDBench workspace/);
    const badTrials = ddbench(['repro', tmp, '--trials', 'zero']);
    assert.notEqual(badTrials.code, 0);
    assert.match(badTrials.stderr, /--trials must be a whole number/);
  });

  it('runs the demo end to end', () => {
    const demo = ddbench(['demo', '--trials', '2']);
    assert.equal(demo.code, 0, demo.stdout + demo.stderr);
    assert.match(demo.stdout, /VERIFIED/);
    assert.match(demo.stdout, /What to try next/);
  });
});
