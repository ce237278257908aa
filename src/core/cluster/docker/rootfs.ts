import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import tar from 'tar-stream';
import { UserError } from '../../errors';

/**
 * Root filesystems assembled from this machine's own files, for images built where no
 * registry is reachable (so no base image can be pulled): a binary is copied with the
 * shared libraries ldd lists for it, at the paths the loader looks them up at. The node
 * image (node-image.ts) and the ddbench CLI image (cli-image.ts) are both made this way.
 */

export interface RootfsFile {
  /** Where the file is on this machine. */
  source: string;
  /** Absolute path inside the image. */
  target: string;
  mode: number;
}

/** Everything a rootfs holds; files come from this machine, the rest is written as given. */
export interface Rootfs {
  files: RootfsFile[];
  dirs: { target: string; mode: number; uid?: number; gid?: number }[];
  texts: { target: string; content: string; mode: number }[];
  symlinks: { target: string; linkTo: string }[];
}

export const NODE_IN_IMAGE = '/usr/local/bin/node';
const TC_CANDIDATES = ['/usr/sbin/tc', '/sbin/tc'];

const run = promisify(execFile);

/** The Node.js binary to copy: this process's, unless it is Electron (VS Code), then the first `node` on PATH. */
function nodeBinary(): string {
  if (process.versions.electron === undefined) return fs.realpathSync(process.execPath);
  const found = onPath('node');
  if (found !== undefined) return found;
  throw new UserError('no `node` binary on PATH to build the docker node image from; install Node.js 20+ or set ddbench.docker.image (for example node:20-slim)');
}

/** The real path of `program` on PATH, if it is there. */
export function onPath(program: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, program);
    if (dir !== '' && fs.existsSync(candidate)) return fs.realpathSync(candidate);
  }
  return undefined;
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

/** Collects a rootfs: binaries with their libraries, files, folders, text files and links. Later additions at a path win. */
export class RootfsBuilder {
  private readonly files = new Map<string, RootfsFile>();
  private readonly dirs = new Map<string, Rootfs['dirs'][number]>();
  private readonly texts = new Map<string, Rootfs['texts'][number]>();
  private readonly symlinks = new Map<string, Rootfs['symlinks'][number]>();

  constructor() {
    if (process.platform !== 'linux') {
      throw new UserError(`an image can be built only from a Linux host's Node.js (this is ${process.platform}); set ddbench.docker.image (or --docker-image), for example node:20-slim`);
    }
  }

  /** A program of this machine at `target`, with every shared library it loads. */
  async binary(source: string, target: string): Promise<this> {
    this.file(fs.realpathSync(source), target, 0o755);
    for (const lib of await sharedLibraries(source)) this.file(fs.realpathSync(lib), lib, 0o755);
    return this;
  }

  /** This machine's Node.js at /usr/local/bin/node, with its libraries. */
  node(): Promise<this> {
    return this.binary(nodeBinary(), NODE_IN_IMAGE);
  }

  file(source: string, target: string, mode = 0o644): this {
    this.files.set(target, { source, target, mode });
    return this;
  }

  /** Every regular file under `sourceDir` (for which `keep` holds), at the same relative path under `targetDir`. */
  tree(sourceDir: string, targetDir: string, keep: (rel: string) => boolean = () => true): this {
    for (const rel of listFiles(sourceDir)) {
      if (keep(rel)) this.file(path.join(sourceDir, rel), path.posix.join(targetDir, rel), fs.statSync(path.join(sourceDir, rel)).mode & 0o111 ? 0o755 : 0o644);
    }
    return this;
  }

  dir(target: string, mode = 0o755, owner?: { uid: number; gid: number }): this {
    this.dirs.set(target, { target, mode, ...(owner !== undefined && { uid: owner.uid, gid: owner.gid }) });
    return this;
  }

  text(target: string, content: string, mode = 0o644): this {
    this.texts.set(target, { target, content, mode });
    return this;
  }

  symlink(target: string, linkTo: string): this {
    this.symlinks.set(target, { target, linkTo });
    return this;
  }

  build(): Rootfs {
    const sorted = <T extends { target: string }>(m: Map<string, T>) => [...m.values()].sort((a, b) => a.target.localeCompare(b.target));
    return { files: sorted(this.files), dirs: sorted(this.dirs), texts: sorted(this.texts), symlinks: sorted(this.symlinks) };
  }
}

/** The regular files under `root`, as relative POSIX paths, sorted. */
export function listFiles(root: string, dir = ''): string[] {
  return fs
    .readdirSync(path.join(root, dir), { withFileTypes: true })
    .flatMap((e) => {
      const rel = dir === '' ? e.name : `${dir}/${e.name}`;
      return e.isDirectory() ? listFiles(root, rel) : e.isFile() ? [rel] : [];
    })
    .sort();
}

/**
 * The node image's rootfs: this machine's Node.js binary and the libraries ldd lists
 * for it, plus `tc` (for netem faults) where the host has it, /tmp and /etc/hosts.
 */
export async function collectRootfs(): Promise<Rootfs> {
  const b = await new RootfsBuilder().node();
  const tc = TC_CANDIDATES.find((p) => fs.existsSync(p));
  if (tc !== undefined) await b.binary(tc, '/usr/sbin/tc');
  return b.dir('/tmp', 0o1777).dir('/etc').text('/etc/hosts', '127.0.0.1 localhost\n').build();
}

/** A hash of the recipe and everything in the rootfs (every file's path, mode and content): an image's cache key. */
export async function hashRootfs(recipe: string, rootfs: Rootfs): Promise<string> {
  const hash = createHash('sha256').update(recipe);
  for (const d of rootfs.dirs) hash.update(`\0dir\0${d.target}\0${d.mode}\0${d.uid ?? 0}:${d.gid ?? 0}`);
  for (const t of rootfs.texts) hash.update(`\0text\0${t.target}\0${t.mode}\0${t.content}`);
  for (const s of rootfs.symlinks) hash.update(`\0link\0${s.target}\0${s.linkTo}`);
  for (const f of rootfs.files) {
    hash.update(`\0${f.target}\0${f.mode}\0`);
    for await (const chunk of fs.createReadStream(f.source)) hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}

/** A cheap key that changes when any copied file does (size, mtime, inode), to skip rehashing within a process. */
export function statKey(rootfs: Rootfs): string {
  return rootfs.files
    .map((f) => {
      const st = fs.statSync(f.source);
      return `${f.source}:${st.size}:${st.mtimeMs}:${st.ino}`;
    })
    .join('\0');
}

function parents(target: string): string[] {
  const dirs: string[] = [];
  for (let dir = path.posix.dirname(target); dir !== '/'; dir = path.posix.dirname(dir)) dirs.unshift(dir.slice(1));
  return dirs;
}

/** The rootfs as a tar stream, fixed timestamps and owners so equal content gives equal layers. */
export function packRootfs(rootfs: Rootfs): NodeJS.ReadableStream {
  const pack = tar.pack();
  const header = { mtime: new Date(0), uid: 0, gid: 0 };
  void (async () => {
    try {
      const made = new Set<string>();
      const dir = (name: string, mode = 0o755, owner = { uid: 0, gid: 0 }) => {
        if (made.has(name)) return;
        made.add(name);
        pack.entry({ ...header, ...owner, name: `${name}/`, type: 'directory', mode });
      };
      const parentsOf = (target: string) => {
        for (const d of parents(target)) dir(d);
      };
      for (const d of rootfs.dirs) {
        parentsOf(d.target);
        dir(d.target.slice(1), d.mode, { uid: d.uid ?? 0, gid: d.gid ?? 0 });
      }
      for (const t of rootfs.texts) {
        parentsOf(t.target);
        pack.entry({ ...header, name: t.target.slice(1), mode: t.mode }, t.content);
      }
      for (const s of rootfs.symlinks) {
        parentsOf(s.target);
        pack.entry({ ...header, name: s.target.slice(1), type: 'symlink', linkname: s.linkTo, mode: 0o777 });
      }
      for (const f of rootfs.files) {
        parentsOf(f.target);
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
