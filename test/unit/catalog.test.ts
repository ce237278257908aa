import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findBug, loadCatalog } from '../../src/core/bugs/catalog';
import { AgentScratch } from '../../src/core/agent/scratch';
import { isWorkspace, openWorkspace, readWorkspace, resolveWorkspace } from '../../src/core/bugs/workspace';
import { workspaceDiff } from '../../src/core/verify/verify';
import { UserError } from '../../src/core/errors';
import { diffTrees } from '../../src/core/patch/unified';
import { bugJson, buggySource, correctSource, systemJson, tempDir, writeFiles, writeToyBugSet } from '../support/bugset';

function toyPatch(root: string): string {
  writeFiles(root, { 'a/src/node.mjs': correctSource, 'b/src/node.mjs': buggySource });
  return diffTrees(path.join(root, 'a'), path.join(root, 'b'), ['src']);
}

describe('bug set catalogue', () => {
  let t: ReturnType<typeof tempDir>;
  let set: string;
  beforeEach(() => {
    t = tempDir('ddbench-catalog-');
    set = path.join(t.dir, 'bugs');
    writeToyBugSet(set, toyPatch(path.join(t.dir, 'p')));
  });
  afterEach(() => t.dispose());

  it('loads systems and bugs with derived difficulty', async () => {
    const c = await loadCatalog(set);
    assert.deepEqual(c.problems, []);
    assert.equal(c.systems.length, 1);
    const bug = findBug(c, 'toy-off-by-one');
    assert.equal(bug.system, 'toy');
    assert.equal(bug.difficulty, 'easy');
    assert.equal(bug.manifest.reproducer.trials, 3);
  });

  it('names the file and the field of a bad manifest and keeps loading the rest', async () => {
    writeFiles(set, {
      'toy/toy-bad/bug.json': JSON.stringify({ ...bugJson, id: 'toy-bad', tier: 4, modelledAfter: { project: 'x', id: 'y', url: 'not a url' } }),
    });
    const c = await loadCatalog(set);
    assert.equal(c.bugs.length, 1);
    assert.equal(c.problems.length, 1);
    const p = c.problems[0]!;
    assert.match(p, /toy-bad\/bug\.json/);
    assert.match(p, /tier:/);
    assert.match(p, /modelledAfter\.url:/);
  });

  it('reports invalid JSON, unknown fields, missing files and id mismatches', async () => {
    writeFiles(set, {
      'toy/toy-json/bug.json': '{ not json',
      'toy/toy-extra/bug.json': JSON.stringify({ ...bugJson, id: 'toy-extra', surprise: 1 }),
      'toy/toy-nopatch/bug.json': JSON.stringify({ ...bugJson, id: 'toy-nopatch' }),
      'toy/toy-name/bug.json': JSON.stringify({ ...bugJson, id: 'other-name' }),
    });
    const c = await loadCatalog(set);
    const all = c.problems.join('\n');
    assert.match(all, /toy-json\/bug\.json: not valid JSON/);
    assert.match(all, /toy-extra\/bug\.json: invalid manifest[\s\S]*surprise/);
    assert.match(all, /toy-nopatch\/bug\.json: bug\.patch: .* does not exist/);
    assert.match(all, /id: "other-name" must equal its folder name "toy-name"/);
  });

  it('rejects a regression check the system does not have', async () => {
    writeFiles(set, { 'toy/toy-off-by-one/bug.json': JSON.stringify({ ...bugJson, regression: ['nope'] }) });
    const c = await loadCatalog(set);
    assert.match(c.problems.join('\n'), /regression: "nope" is not one of toy's tests/);
  });

  it('reports a bad system manifest', async () => {
    writeFiles(set, { 'toy/system.json': JSON.stringify({ ...systemJson, nodes: [] }) });
    const c = await loadCatalog(set);
    assert.equal(c.systems.length, 0);
    assert.match(c.problems.join('\n'), /toy\/system\.json: invalid manifest\n\s+nodes:/);
  });

  it('says which bugs exist when one is not found', async () => {
    const c = await loadCatalog(set);
    assert.throws(() => findBug(c, 'nope'), (e: Error) => e instanceof UserError && /known bugs: toy-off-by-one/.test(e.message));
  });
});

describe('bug workspaces', () => {
  let t: ReturnType<typeof tempDir>;
  let set: string;
  beforeEach(() => {
    t = tempDir('ddbench-ws-');
    set = path.join(t.dir, 'bugs');
    writeToyBugSet(set, toyPatch(path.join(t.dir, 'p')));
  });
  afterEach(() => t.dispose());

  it('holds the buggy source, ISSUE.md and .ddbench, and nothing of the fix or the reproducer', async () => {
    const c = await loadCatalog(set);
    const ws = await openWorkspace(c, 'toy-off-by-one', path.join(t.dir, 'ws'));
    assert.equal(fs.readFileSync(path.join(ws, 'src/node.mjs'), 'utf8'), buggySource);
    assert.ok(fs.existsSync(path.join(ws, 'ISSUE.md')));
    assert.ok(fs.existsSync(path.join(ws, 'README.md')));
    assert.ok(isWorkspace(ws));
    const info = await readWorkspace(ws);
    assert.deepEqual({ ...info, createdAt: undefined }, { dir: ws, bugId: 'toy-off-by-one', system: 'toy', createdAt: undefined });
    assert.ok(Date.parse(info.createdAt) <= Date.now());
    const all = fs.readdirSync(ws, { recursive: true }).map(String);
    assert.ok(!all.some((f) => /bug\.patch|bug\.json|scenarios|system\.json/.test(f)), all.join(','));
    for (const f of all.filter((f) => fs.statSync(path.join(ws, f)).isFile())) {
      assert.ok(!fs.readFileSync(path.join(ws, f), 'utf8').includes('x + 1'), `${f} contains the correct code`);
    }
  });

  it("ships the node runtime's types for the editor, checking nothing, and they are no part of the fix", async () => {
    const c = await loadCatalog(set);
    const ws = await openWorkspace(c, 'toy-off-by-one', path.join(t.dir, 'ws'));
    assert.match(fs.readFileSync(path.join(ws, 'types/ddbench-runtime.d.ts'), 'utf8'), /declare namespace DDBench \{[\s\S]*interface NodeRuntime \{[\s\S]*exposeState\(/);
    const jsconfig = JSON.parse(fs.readFileSync(path.join(ws, 'jsconfig.json'), 'utf8')) as { compilerOptions: { checkJs: boolean }; include: string[] };
    assert.equal(jsconfig.compilerOptions.checkJs, false);
    assert.deepEqual(jsconfig.include, ['src', 'types']);
    const saved = process.env.DDBENCH_BUGS;
    process.env.DDBENCH_BUGS = set;
    try {
      assert.equal(await workspaceDiff(ws), '', 'the workspace as opened has no changes to the fix');
      const { system, bug } = await resolveWorkspace(ws, c);
      const scratch = AgentScratch.create(ws, system, bug);
      try {
        assert.equal(scratch.diff(), '');
        assert.throws(() => scratch.write('types/ddbench-runtime.d.ts', ''), /only files under src\//);
      } finally {
        scratch.dispose();
      }
    } finally {
      if (saved === undefined) delete process.env.DDBENCH_BUGS;
      else process.env.DDBENCH_BUGS = saved;
    }
  });

  it('refuses a non-empty folder and explains a missing workspace', async () => {
    const c = await loadCatalog(set);
    writeFiles(t.dir, { 'full/file.txt': 'x' });
    await assert.rejects(openWorkspace(c, 'toy-off-by-one', path.join(t.dir, 'full')), /not empty/);
    await assert.rejects(readWorkspace(path.join(t.dir, 'full')), /not a DDBench workspace/);
  });
});
