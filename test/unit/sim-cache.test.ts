import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { simCacheDir, snapshotSource } from '../../src/core/sim/snapshot-cache';
import { tempDir, writeFiles } from '../support/bugset';

describe('simulation: the snapshot cache', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('ddbench-sim-cache-');
    writeFiles(tmp.dir, { 'src/node.js': 'export function createNode() { return { start() {} }; }\n', 'src/lib/util.js': 'export const x = 1;\n' });
  });
  afterEach(() => tmp.dispose());

  it('lives in a folder of this user\'s that no one else may enter (0700)', () => {
    const dir = simCacheDir();
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    assert.equal(fs.statSync(path.dirname(dir)).mode & 0o777, 0o700);
    assert.equal(path.dirname(snapshotSource(tmp.dir)), dir);
  });

  it('copies the code and reuses an unchanged copy; a changed file gives a new one', () => {
    const first = snapshotSource(tmp.dir);
    assert.equal(fs.readFileSync(path.join(first, 'src/lib/util.js'), 'utf8'), 'export const x = 1;\n');
    assert.equal(snapshotSource(tmp.dir), first);
    fs.writeFileSync(path.join(tmp.dir, 'src/lib/util.js'), 'export const x = 2;\n');
    assert.notEqual(snapshotSource(tmp.dir), first);
  });

  it('never uses an edited cached copy (hostile: a planted change, an added file, a link in place of a file): it is made again', () => {
    const snap = snapshotSource(tmp.dir);
    const util = path.join(snap, 'src/lib/util.js');
    const planted = path.join(path.dirname(tmp.dir), `${path.basename(tmp.dir)}-planted.js`);
    const tamper: Array<() => void> = [
      () => fs.writeFileSync(util, 'export const x = "planted";\n'),
      () => fs.writeFileSync(path.join(snap, 'src/extra.js'), 'planted\n'),
      () => {
        fs.rmSync(util);
        fs.writeFileSync(planted, 'export const x = "planted";\n');
        fs.symlinkSync(planted, util);
      },
    ];
    for (const edit of tamper) {
      edit();
      assert.equal(snapshotSource(tmp.dir), snap, 'the snapshot keeps its content-named folder');
      assert.equal(fs.lstatSync(util).isFile(), true);
      assert.equal(fs.readFileSync(util, 'utf8'), 'export const x = 1;\n');
      assert.equal(fs.existsSync(path.join(snap, 'src/extra.js')), false);
      fs.rmSync(planted, { force: true });
    }
  });

  it('neither follows nor copies links (hostile: a link pointing out of the tree)', () => {
    const outside = tempDir('ddbench-sim-cache-outside-');
    try {
      writeFiles(outside.dir, { 'secret.js': 'the correct source\n' });
      fs.symlinkSync(path.join(outside.dir, 'secret.js'), path.join(tmp.dir, 'src/linked.js'));
      fs.symlinkSync(outside.dir, path.join(tmp.dir, 'src/linked-dir'));
      const snap = snapshotSource(tmp.dir);
      assert.equal(fs.existsSync(path.join(snap, 'src/linked.js')), false);
      assert.equal(fs.existsSync(path.join(snap, 'src/linked-dir')), false);
      assert.equal(fs.existsSync(path.join(snap, 'src/node.js')), true);
    } finally {
      outside.dispose();
    }
  });
});
