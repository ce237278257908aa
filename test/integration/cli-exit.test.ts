import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ddbenchFromSource } from '../support/cli';


describe('ddbench exit codes and option errors (CLI)', function () {
  this.timeout(120_000);
  let tmp: string;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-cli-exit-'));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('a bad option value names its flag and exits 2 before any work', () => {
    // tmp is no workspace: had the options passed, that would be the error.
    const r = ddbenchFromSource(['repro', tmp, '--trials', 'zero', '--seeds', '-3'], tmp);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'ddbench: --trials must be a whole number >= 1; --seeds must be a whole number >= 1\n');
    const cpus = ddbenchFromSource(['validate', '--backend', 'docker', '--docker-cpus', '0'], tmp);
    assert.equal(cpus.code, 2);
    assert.match(cpus.stderr, /--docker-cpus must be a number > 0/);
  });

  it('a usage error (unknown option, bad choice, missing required option) exits 2', () => {
    assert.equal(ddbenchFromSource(['repro', tmp, '--trails', '3'], tmp).code, 2);
    const choice = ddbenchFromSource(['repro', tmp, '--backend', 'kubernetes'], tmp);
    assert.equal(choice.code, 2);
    assert.match(choice.stderr, /Allowed choices are process, docker/);
    assert.equal(ddbenchFromSource(['agent', tmp], tmp).code, 2);
  });

  it('a second bench on a busy --out refuses at start (exit 2), naming the holder', () => {
    const out = path.join(tmp, 'bench-out');
    fs.mkdirSync(out);
    // A live process (this test's parent) holds the out folder, as a running bench would.
    fs.writeFileSync(path.join(out, 'bench.lock'), `${process.ppid}\n`);
    const r = ddbenchFromSource(['bench', '--models', 'm', '--bugs', 'all', '--out', out], tmp);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, `ddbench: ${out} is in use by another bench (pid ${process.ppid}); wait for it to end, or give another --out\n`);
    assert.deepEqual(fs.readdirSync(out).sort(), ['bench.lock', 'records']);
  });

  it('input the user can fix exits 2; --help lists the exit codes and exits 0', () => {
    const notWs = ddbenchFromSource(['sim', tmp], tmp);
    assert.equal(notWs.code, 2);
    assert.match(notWs.stderr, /not a DDBench workspace/);
    const help = ddbenchFromSource(['--help'], tmp);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Exit codes:\n {2}0 +success\n {2}1 +the check failed.*\n {2}2 +bad input or an error you can fix.*\n {2}70 +an internal error.*\n {2}130 interrupted by Ctrl-C \(SIGINT\).*\n {2}143 interrupted by SIGTERM/);
  });
});
