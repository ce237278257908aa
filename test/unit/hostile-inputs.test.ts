import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AgentScratch } from '../../src/core/agent/scratch';
import { readFile } from '../../src/core/agent/tools/files';
import { EvidenceBudget } from '../../src/core/agent/budget';
import { findBug, loadCatalog } from '../../src/core/bugs/catalog';
import { openWorkspace, resolveWorkspace } from '../../src/core/bugs/workspace';
import { echo } from '../../src/core/echo';
import { acquireLock, LockHeld } from '../../src/core/lock-file';
import { applyEditBlocks } from '../../src/core/patch/search-replace';
import { diffTrees } from '../../src/core/patch/unified';
import { mergeRecords } from '../../src/core/study/collect';
import { BENCH_LOCK, lockBenchOut } from '../../src/core/study/bench';
import { appendRecords, readRecordsFile } from '../../src/core/study/store';
import { verifyFix } from '../../src/core/verify/verify';
import { packageRoot } from '../../src/core/paths';
import { AGENT_BUGSET, COUNTER_BUG, openTestWorkspace } from '../support/agent-fixture';
import { bugJson, buggySource, correctSource, tempDir, writeFiles, writeToyBugSet } from '../support/bugset';
import { human } from '../support/study-fixtures';

/** A pid that no longer runs: a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

describe('hostile inputs get a precise message naming the file and what to do', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir('ddbench-hostile-')));
  afterEach(() => t.dispose());

  describe('patches given to verify (no trial runs: each is refused first)', () => {
    let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
    beforeEach(async () => (ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG)));
    afterEach(() => ws.dispose());
    const verify = (file: string) => verifyFix(ws.dir, { kind: 'patch', file }, { catalog: undefined, sim: false, trials: 1 });
    before(() => (process.env.DDBENCH_BUGS = AGENT_BUGSET));
    after(() => delete process.env.DDBENCH_BUGS);

    it('an empty --patch file is said to be empty, by name, not blamed on the workspace', async () => {
      const file = path.join(t.dir, 'empty.diff');
      fs.writeFileSync(file, '\n  \n');
      await assert.rejects(verify(file), (e: Error) => e.message.startsWith(`patch ${file}: the patch file is empty; put a unified diff in it`) && !/workspace has no changes/.test(e.message));
    });

    it('a git binary patch and a "Binary files differ" diff: binary patches are not supported, naming the file', async () => {
      const gitBinary = path.join(t.dir, 'binary.diff');
      fs.writeFileSync(gitBinary, 'diff --git a/src/total.mjs b/src/total.mjs\nindex 1..2 100644\nGIT binary patch\nliteral 5\nMcmZ?b00001\n\nliteral 0\nHcmV?d00001\n');
      await assert.rejects(verify(gitBinary), new RegExp(`patch ${gitBinary}: binary patches are not supported \\("GIT binary patch"\\)`));
      const plain = path.join(t.dir, 'plain-binary.diff');
      fs.writeFileSync(plain, 'diff --git a/src/logo.png b/src/logo.png\nindex 1..2 100644\nBinary files a/src/logo.png and b/src/logo.png differ\n');
      await assert.rejects(verify(plain), /binary patches are not supported \("Binary files a\/src\/logo\.png and b\/src\/logo\.png differ"\)/);
    });

    it('a patch that does not apply is named in the error', async () => {
      const file = path.join(t.dir, 'stale.diff');
      fs.writeFileSync(file, '--- a/src/total.mjs\n+++ b/src/total.mjs\n@@ -1,1 +1,1 @@\n-nothing like this line\n+x\n');
      await assert.rejects(verify(file), new RegExp(`patch ${file}: src/total\\.mjs: hunk at line 1 does not match the file`));
    });
  });

  describe('open', () => {
    function toyPatch(): string {
      writeFiles(t.dir, { 'a/src/node.mjs': correctSource, 'b/src/node.mjs': buggySource });
      return diffTrees(path.join(t.dir, 'a'), path.join(t.dir, 'b'), ['src']);
    }

    it('of a bug whose manifest is broken names the manifest and the schema error, not "no bug"', async () => {
      const set = path.join(t.dir, 'bugs');
      writeToyBugSet(set, toyPatch());
      writeFiles(set, { 'toy/toy-off-by-one/bug.json': JSON.stringify({ ...bugJson, tier: 7 }) });
      const catalog = await loadCatalog(set);
      assert.throws(
        () => findBug(catalog, 'toy-off-by-one'),
        (e: Error) => e.message.startsWith(`bug "toy-off-by-one" could not be loaded; fix its manifest: ${path.join(set, 'toy', 'toy-off-by-one', 'bug.json')}: invalid manifest\n  tier:`),
      );
      assert.throws(() => findBug(catalog, 'no-such-bug'), /: no bug "no-such-bug"/);
    });

    it('with a bug.patch that does not apply leaves nothing behind, and a retry after the fix works', async () => {
      const set = path.join(t.dir, 'bugs');
      writeToyBugSet(set, '--- a/src/node.mjs\n+++ b/src/node.mjs\n@@ -1,1 +1,1 @@\n-no such line\n+x\n');
      const dest = path.join(t.dir, 'workspaces', 'toy');
      const bugPatch = path.join(set, 'toy', 'toy-off-by-one', 'bug.patch');
      await assert.rejects(openWorkspace(await loadCatalog(set), 'toy-off-by-one', dest), new RegExp(`: ${bugPatch}: src/node\\.mjs: hunk at line 1 does not match`));
      assert.deepEqual(fs.readdirSync(path.dirname(dest)), [], 'a half-made folder (or its temp) was left');
      fs.writeFileSync(bugPatch, toyPatch());
      assert.equal(await openWorkspace(await loadCatalog(set), 'toy-off-by-one', dest), dest);
      assert.equal(fs.readFileSync(path.join(dest, 'src', 'node.mjs'), 'utf8'), buggySource);
      assert.deepEqual(fs.readdirSync(path.dirname(dest)), ['toy']);
    });
  });

  describe('records', () => {
    it('invalid UTF-8 is reported at its line, not replaced; the other lines are read', () => {
      const file = path.join(t.dir, 'bad-utf8.jsonl');
      const good = JSON.stringify(human('P01'));
      fs.writeFileSync(file, Buffer.concat([Buffer.from(good + '\n'), Buffer.from('{"v":2,"note":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}\n'), Buffer.from(JSON.stringify(human('P02')) + '\n')]));
      const r = readRecordsFile(file);
      assert.equal(r.lines.length, 2);
      assert.deepEqual(r.problems.map((p) => [p.line, p.kind]), [[2, 'invalid-utf8']]);
      assert.match(r.problems[0]!.message, /^invalid UTF-8 at line 2/);
    });

    it('a UTF-16 file is called UTF-16 (with or without a BOM), with how to convert it, never torn', () => {
      const text = JSON.stringify(human('P01')) + '\n';
      for (const [name, bytes] of [
        ['bom.jsonl', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])],
        ['no-bom.jsonl', Buffer.from(text, 'utf16le')],
      ] as const) {
        const file = path.join(t.dir, name);
        fs.writeFileSync(file, bytes);
        const r = readRecordsFile(file);
        assert.deepEqual(r.problems.map((p) => p.kind), ['utf16'], name);
        assert.match(r.problems[0]!.message, /a UTF-16 file.*convert it \(iconv -f UTF-16 -t UTF-8\)/);
      }
    });

    it('merge waits for another merge into the same file, so no line is written twice', async () => {
      const src = path.join(t.dir, 'src.jsonl');
      appendRecords(src, [human('P01'), human('P02')]);
      const target = path.join(t.dir, 'out', 'merged.jsonl');
      fs.mkdirSync(path.dirname(target));
      // A live process (this one's parent) holds the lock, as a concurrent merge would.
      fs.writeFileSync(`${target}.lock`, `${process.ppid}\n`);
      let done = false;
      const merging = mergeRecords(target, [src]).then((r) => ((done = true), r));
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(done, false, 'the merge did not wait for the lock');
      fs.rmSync(`${target}.lock`);
      assert.equal((await merging).added, 2);
      assert.ok(!fs.existsSync(`${target}.lock`), 'the lock was not removed');
    });

    it('two merges at once in two processes: every line once', async () => {
      const src = path.join(t.dir, 'src.jsonl');
      appendRecords(src, Array.from({ length: 200 }, (_, i) => human(`P${i}`)));
      const target = path.join(t.dir, 'merged.jsonl');
      const script = `require(${JSON.stringify(path.join(packageRoot(), 'src', 'core', 'study', 'collect.ts'))}).mergeRecords(${JSON.stringify(target)}, [${JSON.stringify(src)}]).then((r) => console.log(r.added))`;
      const run = () =>
        new Promise<number>((resolve, reject) => {
          const child = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), '-e', script]);
          let out = '';
          child.stdout.on('data', (d: Buffer) => (out += d.toString()));
          child.on('exit', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`merge exited ${code}`))));
        });
      const added = await Promise.all([run(), run()]);
      assert.deepEqual(added.sort((a, b) => a - b), [0, 200]);
      assert.equal(readRecordsFile(target).lines.length, 200);
    });
  });

  describe('bench --out', () => {
    it('a second bench on one --out refuses at start, naming the holder; a stale lock of a dead pid is taken over', async () => {
      const out = path.join(t.dir, 'bench');
      fs.mkdirSync(out);
      fs.writeFileSync(path.join(out, BENCH_LOCK), `${process.ppid}\n`);
      assert.throws(() => lockBenchOut(out), (e: Error) => e instanceof LockHeld && e.message === `${out} is in use by another bench (pid ${process.ppid}); wait for it to end, or give another --out`);
      fs.writeFileSync(path.join(out, BENCH_LOCK), `${await deadPid()}\n`);
      const release = lockBenchOut(out);
      assert.equal(fs.readFileSync(path.join(out, BENCH_LOCK), 'utf8'), `${process.pid}\n`);
      release();
      assert.ok(!fs.existsSync(path.join(out, BENCH_LOCK)));
      assert.deepEqual(fs.readdirSync(out), [], 'the lock left a temp file');
    });

    it('a lock file holding garbage is stale too', () => {
      const file = path.join(t.dir, 'x.lock');
      fs.writeFileSync(file, 'not a pid');
      acquireLock(file, () => 'held')();
    });
  });

  describe('tool errors', () => {
    it('echo at most 200 characters of a multi-megabyte argument, then its length', async () => {
      assert.equal(echo('short'), 'short');
      assert.equal(echo('x'.repeat(3_000_000)), `${'x'.repeat(200)}… (3000000 chars)`);
      const ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
      const r = await resolveWorkspace(ws.dir, await loadCatalog(AGENT_BUGSET));
      const scratch = AgentScratch.create(ws.dir, r.system, r.bug);
      try {
        const ctx = { scratch, budget: new EvidenceBudget(10_000), evidence: undefined, signal: new AbortController().signal, submit: () => assert.fail('no submit') };
        const huge = `src/${'a'.repeat(3_000_000)}.mjs`;
        await assert.rejects(readFile.run({ path: huge, start_line: 1 }, ctx), (e: Error) => e.message.length < 1000 && e.message.includes(`… (${huge.length} chars): no such file`));
        const line = 'y'.repeat(2_000_000);
        assert.throws(() => applyEditBlocks(fs.readFileSync(path.join(scratch.root, 'src', 'total.mjs'), 'utf8'), [{ search: `export function addTo(total, amount) {\n${line}\n`, replace: 'zzz_unique\n' }], 'src/total.mjs'), (e: Error) => e.message.length < 5000 && e.message.includes('(2000000 chars)'));
      } finally {
        scratch.dispose();
        ws.dispose();
      }
    });
  });
});
