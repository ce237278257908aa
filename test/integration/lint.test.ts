import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** A copy of what `npm run lint` reads, with the repository's node_modules linked in. */
function lintableCopy(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-lint-'));
  for (const part of ['src', 'media', 'test', 'bugs', 'package.json', 'tsconfig.json', '.dependency-cruiser.cjs']) {
    fs.cpSync(path.join(ROOT, part), path.join(dir, part), { recursive: true });
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

function lint(dir: string): { status: number | null; output: string } {
  const r = spawnSync('npm', ['run', '--silent', 'lint'], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, output: r.stdout + r.stderr };
}

/** The layers are enforced by the build, not by convention: `npm run lint` fails on each kind of planted violation. */
describe('npm run lint enforces the layers', function () {
  this.timeout(180_000);
  let dir: string;
  before(() => {
    dir = lintableCopy();
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('fails on an import of vscode in core, an upward import and a cycle, naming each rule and file', () => {
    fs.writeFileSync(path.join(dir, 'src/core/bugs/planted-vscode.ts'), "import * as vscode from 'vscode';\nexport const planted = vscode.version;\n");
    fs.writeFileSync(path.join(dir, 'src/core/sim/planted-upward.ts'), "import { verifyFix } from '../verify/verify';\nexport const planted = verifyFix;\n");
    fs.writeFileSync(path.join(dir, 'src/core/patch/planted-a.ts'), "import { b } from './planted-b';\nexport const a = (): number => b() + 1;\n");
    fs.writeFileSync(path.join(dir, 'src/core/patch/planted-b.ts'), "import { a } from './planted-a';\nexport const b = (): number => a() - 1;\n");
    const r = lint(dir);
    assert.notEqual(r.status, 0, r.output);
    assert.match(r.output, /vscode-only-in-extension: src\/core\/bugs\/planted-vscode\.ts → vscode/);
    assert.match(r.output, /layer-sim: src\/core\/sim\/planted-upward\.ts → src\/core\/verify\/verify\.ts/);
    assert.match(r.output, /no-circular: src\/core\/patch\/planted-a\.ts/);
  });

  it('fails the build when a module the CLI bundles imports vscode (only the extension bundle leaves it external)', () => {
    const build = path.join(dir, 'build');
    fs.mkdirSync(build);
    for (const part of ['src', 'media', 'package.json', 'esbuild.js']) fs.cpSync(path.join(ROOT, part), path.join(build, part), { recursive: true });
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(build, 'node_modules'));
    const clean = spawnSync(process.execPath, ['esbuild.js'], { cwd: build, encoding: 'utf8' });
    assert.equal(clean.status, 0, clean.stderr);
    fs.appendFileSync(path.join(build, 'src/core/errors.ts'), "\nimport 'vscode';\n");
    const planted = spawnSync(process.execPath, ['esbuild.js'], { cwd: build, encoding: 'utf8' });
    assert.notEqual(planted.status, 0);
    assert.match(planted.stderr, /Could not resolve "vscode"/);
  });
});
