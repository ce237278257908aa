import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyUnifiedDiff, changedFiles, diffTrees, reverseUnifiedDiff } from '../../src/core/patch/unified';
import { UserError } from '../../src/core/errors';
import { buggySource, correctSource, tempDir, writeFiles } from '../support/bugset';

describe('unified diffs', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir('ddbench-patch-')));
  afterEach(() => t.dispose());

  it('diffs two trees and applies the diff back, including added and removed files', () => {
    writeFiles(t.dir, { 'a/src/x.js': correctSource, 'a/src/gone.js': 'bye\n', 'b/src/x.js': buggySource, 'b/src/new.js': 'hi\n' });
    const diff = diffTrees(path.join(t.dir, 'a'), path.join(t.dir, 'b'), ['src']);
    assert.deepEqual(changedFiles(diff).sort(), ['src/gone.js', 'src/new.js', 'src/x.js']);
    const applied = applyUnifiedDiff(path.join(t.dir, 'a'), diff);
    assert.equal(applied.fuzz, 0);
    assert.equal(fs.readFileSync(path.join(t.dir, 'a/src/x.js'), 'utf8'), buggySource);
    assert.equal(fs.readFileSync(path.join(t.dir, 'a/src/new.js'), 'utf8'), 'hi\n');
    assert.equal(fs.existsSync(path.join(t.dir, 'a/src/gone.js')), false);
  });

  it('reverses a diff', () => {
    writeFiles(t.dir, { 'a/src/x.js': correctSource, 'b/src/x.js': buggySource });
    const diff = diffTrees(path.join(t.dir, 'a'), path.join(t.dir, 'b'), ['src']);
    applyUnifiedDiff(path.join(t.dir, 'b'), reverseUnifiedDiff(diff));
    assert.equal(fs.readFileSync(path.join(t.dir, 'b/src/x.js'), 'utf8'), correctSource);
  });

  it('tolerates drifted context and says how much', () => {
    writeFiles(t.dir, { 'a/src/x.js': correctSource, 'b/src/x.js': buggySource });
    const diff = diffTrees(path.join(t.dir, 'a'), path.join(t.dir, 'b'), ['src']);
    writeFiles(t.dir, { 'a/src/x.js': correctSource.replace('export const name = "toy";', 'export const name = "toy2";') });
    const applied = applyUnifiedDiff(path.join(t.dir, 'a'), diff);
    assert.ok(applied.fuzz >= 1);
    assert.match(fs.readFileSync(path.join(t.dir, 'a/src/x.js'), 'utf8'), /x \+ 2/);
  });

  it('names the file and hunk when a diff does not apply, and writes nothing', () => {
    writeFiles(t.dir, { 'a/src/x.js': correctSource, 'a/src/y.js': 'y\n', 'b/src/x.js': buggySource, 'b/src/y.js': 'y2\n' });
    const diff = diffTrees(path.join(t.dir, 'a'), path.join(t.dir, 'b'), ['src']);
    writeFiles(t.dir, { 'a/src/x.js': 'something else entirely\n' });
    assert.throws(() => applyUnifiedDiff(path.join(t.dir, 'a'), diff), (e: Error) => e instanceof UserError && /src\/x\.js: hunk at line 1/.test(e.message));
    assert.equal(fs.readFileSync(path.join(t.dir, 'a/src/y.js'), 'utf8'), 'y\n');
  });

  it('refuses paths outside the folder', () => {
    const evil = '--- a/../outside.js\n+++ b/../outside.js\n@@ -0,0 +1 @@\n+boom\n';
    assert.throws(() => applyUnifiedDiff(t.dir, evil), /outside the workspace/);
  });

  it('rejects an empty or garbled diff', () => {
    assert.throws(() => applyUnifiedDiff(t.dir, 'hello\n'), UserError);
  });
});
