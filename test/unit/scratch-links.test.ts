import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentScratch, ToolError } from '../../src/core/agent/scratch';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { resolveWorkspace } from '../../src/core/bugs/workspace';
import { copyTree } from '../../src/core/patch/tree';
import { AGENT_BUGSET, COUNTER_BUG, openTestWorkspace } from '../support/agent-fixture';

/** Hostile trees: links that leave the tree must never be followed, copied or written through. */
describe('scratch copies and symbolic links (hostile trees)', () => {
  let outside: string;
  beforeEach(() => (outside = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-links-outside-'))));
  afterEach(() => fs.rmSync(outside, { recursive: true, force: true }));

  /** A tree with a dangling link out, a link to a folder out, and links inside pointing inside. */
  function hostileTree(root: string): void {
    fs.mkdirSync(path.join(root, 'src', 'lib'), { recursive: true });
    fs.writeFileSync(path.join(root, 'src', 'real.js'), 'real\n');
    fs.symlinkSync(path.join(outside, 'x'), path.join(root, 'src', 'dangling-out.js'));
    fs.symlinkSync(outside, path.join(root, 'src', 'dir-out'));
    fs.symlinkSync('real.js', path.join(root, 'src', 'alias.js'));
    fs.symlinkSync(path.join(root, 'src', 'lib'), path.join(root, 'src', 'lib-abs'));
  }

  it('copyTree leaves out links pointing outside (and says which), and keeps links inside pointing inside the copy', () => {
    const src = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-links-src-'));
    const dest = path.join(src, '..', `${path.basename(src)}-copy`);
    try {
      hostileTree(src);
      const skipped = copyTree(src, dest);
      assert.deepEqual(skipped.map((l) => [l.path, l.target]).sort(), [
        ['src/dangling-out.js', path.join(outside, 'x')],
        ['src/dir-out', outside],
      ]);
      assert.ok(!fs.existsSync(path.join(dest, 'src', 'dir-out')) && !fs.lstatSync(path.join(dest, 'src')).isSymbolicLink());
      assert.throws(() => fs.lstatSync(path.join(dest, 'src', 'dangling-out.js')), /ENOENT/);
      assert.equal(fs.readlinkSync(path.join(dest, 'src', 'alias.js')), 'real.js');
      // An absolute link inside the tree becomes relative, so it points inside the copy, not back at the source.
      assert.equal(fs.realpathSync(path.join(dest, 'src', 'lib-abs')), fs.realpathSync(path.join(dest, 'src', 'lib')));
      assert.equal(fs.readFileSync(path.join(dest, 'src', 'alias.js'), 'utf8'), 'real\n');
    } finally {
      fs.rmSync(src, { recursive: true, force: true });
      fs.rmSync(dest, { recursive: true, force: true });
    }
  });

  describe("the agent's copy", () => {
    let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
    let scratch: AgentScratch;
    beforeEach(async () => {
      ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
      hostileTree(ws.dir);
      const r = await resolveWorkspace(ws.dir, await loadCatalog(AGENT_BUGSET));
      // The hostile tree is what the person's edits left: the agent starts from them.
      scratch = AgentScratch.create(ws.dir, r.system, r.bug, 'workspace');
    });
    afterEach(() => {
      scratch.dispose();
      ws.dispose();
    });

    it('a dangling link to outside: left out; reading or writing it is refused, and nothing is written outside', () => {
      assert.deepEqual(scratch.skippedLinks.map((l) => l.path).sort(), ['src/dangling-out.js', 'src/dir-out']);
      assert.throws(() => scratch.write('src/dangling-out.js', 'escaped'), (e: Error) => e instanceof ToolError && /src\/dangling-out\.js: points outside the repository \(src\/dangling-out\.js is a symbolic link to .*x, left out of this copy\)/.test(e.message));
      assert.throws(() => scratch.write('src/dir-out/planted.js', 'escaped'), /points outside the repository/);
      assert.throws(() => scratch.read('src/dir-out/anything'), /points outside the repository/);
      assert.deepEqual(fs.readdirSync(outside), []);
    });

    it('never writes through a link, even one pointing inside, nor through a link planted in the copy after it was made', () => {
      assert.throws(() => scratch.write('src/alias.js', 'x'), (e: Error) => e instanceof ToolError && /src\/alias\.js: src\/alias\.js is a symbolic link; edits never write through links/.test(e.message));
      assert.throws(() => scratch.write('src/lib-abs/new.js', 'x'), /src\/lib-abs is a symbolic link/);
      // The original escape: a dangling link to outside, in the copy itself.
      fs.symlinkSync(path.join(outside, 'y'), path.join(scratch.root, 'src', 'planted.js'));
      assert.throws(() => scratch.write('src/planted.js', 'escaped'), ToolError);
      assert.deepEqual(fs.readdirSync(outside), []);
      assert.equal(scratch.read('src/alias.js'), 'real\n', 'reading through a link inside stays allowed');
      scratch.write('src/real.js', 'edited\n');
      assert.equal(fs.readFileSync(path.join(ws.dir, 'src', 'real.js'), 'utf8'), 'real\n', 'the workspace was written');
      assert.equal(scratch.read('src/alias.js'), 'edited\n');
    });
  });
});
