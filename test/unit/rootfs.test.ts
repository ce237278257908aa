import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import tar from 'tar-stream';
import { cliPackageFiles, CLI_PACKAGE_FILES } from '../../src/core/cluster/docker/cli-image';
import { hashRootfs, packRootfs, RootfsBuilder, type Rootfs } from '../../src/core/cluster/docker/rootfs';

interface Entry {
  name: string;
  type: string;
  mode: number;
  uid: number;
  linkname?: string;
  content: string;
}

async function entries(rootfs: Rootfs): Promise<Entry[]> {
  const out: Entry[] = [];
  const extract = tar.extract();
  extract.on('entry', (h, stream, next) => {
    let content = '';
    stream.on('data', (c: unknown) => {
      content += (c as Buffer).toString('latin1');
    });
    stream.on('end', () => {
      out.push({ name: h.name, type: h.type ?? 'file', mode: h.mode ?? 0, uid: h.uid ?? 0, ...(h.linkname ? { linkname: h.linkname } : {}), content });
      next();
    });
  });
  const done = new Promise<void>((resolve, reject) => {
    extract.on('finish', () => resolve());
    extract.on('error', reject);
  });
  packRootfs(rootfs).pipe(extract as unknown as NodeJS.WritableStream);
  await done;
  return out;
}

/** The root filesystems DDBench imports as images where no registry is reachable (node image, CLI image). */
describe('rootfs: images assembled from this machine', () => {
  let tmp: string;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-rootfs-'));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('packs binaries with their libraries, files, owned folders, text files and links, parents first', async function () {
    if (process.platform !== 'linux') this.skip();
    const file = path.join(tmp, 'data.txt');
    fs.writeFileSync(file, 'hello');
    const b = await new RootfsBuilder().node();
    const rootfs = b.file(file, '/opt/app/data.txt').dir('/home/node', 0o755, { uid: 1000, gid: 1000 }).dir('/tmp', 0o1777).text('/etc/passwd', 'root:x:0:0::/root:/bin/sh\n').symlink('/usr/local/bin/app', '/opt/app/data.txt').build();
    const list = await entries(rootfs);
    const byName = new Map(list.map((e) => [e.name, e]));
    assert.equal(byName.get('usr/local/bin/node')?.mode, 0o755);
    assert.ok(list.some((e) => /^lib.*\/libc\.so\.6$/.test(e.name)), 'the C library node loads');
    assert.equal(byName.get('opt/app/data.txt')?.content, 'hello');
    assert.deepEqual([byName.get('home/node/')?.uid, byName.get('home/node/')?.mode], [1000, 0o755]);
    assert.equal(byName.get('tmp/')?.mode, 0o1777);
    assert.equal(byName.get('etc/passwd')?.content, 'root:x:0:0::/root:/bin/sh\n');
    assert.deepEqual([byName.get('usr/local/bin/app')?.type, byName.get('usr/local/bin/app')?.linkname], ['symlink', '/opt/app/data.txt']);
    const index = (name: string) => list.findIndex((e) => e.name === name);
    for (const e of list) {
      const parent = path.posix.dirname(e.name.replace(/\/$/, ''));
      if (parent !== '.') assert.ok(index(`${parent}/`) >= 0 && index(`${parent}/`) < index(e.name), `${parent}/ comes before ${e.name}`);
    }
  });

  it("hashes every file's content, every folder's owner and every text: the image's cache key", async () => {
    const file = path.join(tmp, 'a.txt');
    fs.writeFileSync(file, 'one');
    const make = () => new RootfsBuilder().file(file, '/a.txt').dir('/home/node', 0o755, { uid: 1000, gid: 1000 }).text('/etc/hosts', 'h\n');
    const first = await hashRootfs('r', make().build());
    assert.equal(await hashRootfs('r', make().build()), first);
    assert.notEqual(await hashRootfs('r2', make().build()), first, 'the recipe');
    assert.notEqual(await hashRootfs('r', make().dir('/home/node', 0o755, { uid: 0, gid: 0 }).build()), first, 'an owner');
    assert.notEqual(await hashRootfs('r', make().text('/etc/hosts', 'other\n').build()), first, 'a text');
    fs.writeFileSync(file, 'two');
    assert.notEqual(await hashRootfs('r', make().build()), first, "a file's content");
  });

  it('the CLI image takes the bundles, the webview bundles and the bug set, no source maps, and says to build first when a bundle is missing', () => {
    const root = path.join(tmp, 'built');
    const made = [...CLI_PACKAGE_FILES, 'dist/cli.js.map', 'dist/extension.js', 'dist/media/timeline.js', 'dist/media/timeline.js.map', 'dist/media/agent.css', 'bugs/raftkv/system.json', 'bugs/raftkv/src/node.js', 'src/cli/main.ts', 'node_modules/zod/index.js'];
    for (const f of made) {
      fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
      fs.writeFileSync(path.join(root, f), f);
    }
    assert.deepEqual(cliPackageFiles(root), [...CLI_PACKAGE_FILES, 'dist/media/timeline.js', 'dist/media/agent.css', 'bugs/raftkv/system.json', 'bugs/raftkv/src/node.js'].sort());
    const empty = path.join(tmp, 'pkg');
    fs.mkdirSync(empty);
    fs.writeFileSync(path.join(empty, 'package.json'), '{"name":"ddbench"}');
    assert.throws(() => cliPackageFiles(empty), /dist\/cli\.js.*missing in .*: run `npm run build` there first/);
  });
});
