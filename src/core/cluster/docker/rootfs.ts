import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import tar from 'tar-stream';
import { UserError } from '../../errors';

/**
 * The smallest root filesystem that runs the live host: this machine's Node.js binary
 * and the shared libraries ldd lists for it, plus `tc` (for netem faults) where the
 * host has it, /tmp and /etc/hosts. Built where no registry is reachable, so no base
 * image has to be pulled.
 */

export interface RootfsFile {
  /** Where the file is on this machine. */
  source: string;
  /** Absolute path inside the image. */
  target: string;
  mode: number;
}

/** Bumped when the layout changes, so an image built by an older recipe is not reused. */
const RECIPE = 'ddbench-node-rootfs-1';
export const NODE_IN_IMAGE = '/usr/local/bin/node';
const TC_CANDIDATES = ['/usr/sbin/tc', '/sbin/tc'];
const DIRS: [string, number][] = [['tmp', 0o1777], ['etc', 0o755]];

const run = promisify(execFile);

/** The Node.js binary to copy: this process's, unless it is Electron (VS Code), then the first `node` on PATH. */
function nodeBinary(): string {
  if (process.versions.electron === undefined) return fs.realpathSync(process.execPath);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    if (dir !== '' && fs.existsSync(candidate)) return fs.realpathSync(candidate);
  }
  throw new UserError('no `node` binary on PATH to build the docker node image from; install Node.js 20+ or set ddbench.docker.image (for example node:20-slim)');
}

/** The libraries `ldd` says a binary loads, by the path the loader looks them up at. */
async function sharedLibraries(binary: string): Promise<string[]> {
  let stdout: string;
  try {
    ({ stdout } = await run('ldd', [binary]));
  } catch (err) {
    throw new UserError(`cannot list the libraries of ${binary} with ldd (${err instanceof Error ? err.message : String(err)}); set ddbench.docker.image (for example node:20-slim) instead of building an image`);
  }
  const libs: string[] = [];
  for (const line of stdout.split('\n')) {
    // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
    const match = /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (match?.[1] !== undefined) libs.push(match[1]);
  }
  return libs;
}

export async function collectRootfs(): Promise<RootfsFile[]> {
  if (process.platform !== 'linux') {
    throw new UserError(`a node image can be built only from a Linux host's Node.js (this is ${process.platform}); set ddbench.docker.image (or --docker-image), for example node:20-slim`);
  }
  const node = nodeBinary();
  const files = new Map<string, RootfsFile>([[NODE_IN_IMAGE, { source: node, target: NODE_IN_IMAGE, mode: 0o755 }]]);
  const addLibs = async (binary: string) => {
    for (const lib of await sharedLibraries(binary)) files.set(lib, { source: fs.realpathSync(lib), target: lib, mode: 0o755 });
  };
  await addLibs(node);
  const tc = TC_CANDIDATES.find((p) => fs.existsSync(p));
  if (tc !== undefined) {
    files.set('/usr/sbin/tc', { source: fs.realpathSync(tc), target: '/usr/sbin/tc', mode: 0o755 });
    await addLibs(tc);
  }
  return [...files.values()].sort((a, b) => a.target.localeCompare(b.target));
}

/** A hash of the recipe and every file's path and content: the image's cache key. */
export async function hashRootfs(files: readonly RootfsFile[]): Promise<string> {
  const hash = createHash('sha256').update(RECIPE);
  for (const f of files) {
    hash.update(`\0${f.target}\0${f.mode}\0`);
    for await (const chunk of fs.createReadStream(f.source)) hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}

function parents(target: string): string[] {
  const dirs: string[] = [];
  for (let dir = path.posix.dirname(target); dir !== '/'; dir = path.posix.dirname(dir)) dirs.unshift(dir.slice(1));
  return dirs;
}

/** The rootfs as a tar stream, fixed timestamps and owners so equal content gives equal layers. */
export function packRootfs(files: readonly RootfsFile[]): NodeJS.ReadableStream {
  const pack = tar.pack();
  const header = { mtime: new Date(0), uid: 0, gid: 0 };
  void (async () => {
    try {
      const made = new Set<string>();
      const dir = (name: string, mode = 0o755) => {
        if (made.has(name)) return;
        made.add(name);
        pack.entry({ ...header, name: `${name}/`, type: 'directory', mode });
      };
      for (const [name, mode] of DIRS) dir(name, mode);
      pack.entry({ ...header, name: 'etc/hosts', mode: 0o644 }, '127.0.0.1 localhost\n');
      for (const f of files) {
        for (const d of parents(f.target)) dir(d);
        const { size } = fs.statSync(f.source);
        await new Promise<void>((resolve, reject) => {
          const entry = pack.entry({ ...header, name: f.target.slice(1), size, mode: f.mode }, (err) => (err ? reject(err) : resolve()));
          fs.createReadStream(f.source).on('error', reject).pipe(entry);
        });
      }
      pack.finalize();
    } catch (err) {
      pack.destroy(err instanceof Error ? err : new Error(String(err)));
    }
  })();
  // tar-stream's packs are streamx streams; the engine client wants a Node.js one.
  return Readable.from(pack, { objectMode: false });
}
