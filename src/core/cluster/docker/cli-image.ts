import fs from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import { UserError } from '../../errors';
import { packageRoot } from '../../paths';
import { rootfsImage, type RootfsImageSpec } from './node-image';
import { listFiles, onPath, RootfsBuilder, type Rootfs } from './rootfs';

/**
 * The `ddbench` CLI image, for running `ddbench bench` (a shard of a study) where the
 * work is scheduled by an engine such as a Kubernetes indexed Job (deploy/). Two routes
 * give the same content: `deploy/Dockerfile` (node:20 from a registry, bubblewrap from
 * apt, the package copied as the root .dockerignore allows), and, for engines with no
 * registry, this module: `docker import` of a rootfs assembled from this machine's
 * Node.js, /bin/sh, env and bwrap with their libraries, and the same package files.
 * Both run as the user `node` (uid 1000, home /home/node), as node:20 images do.
 */

export const CLI_REPO = 'ddbench-cli';
/** Where the package goes in the image (the Dockerfile copies it there too). */
export const PACKAGE_IN_IMAGE = '/opt/ddbench';
export const IMAGE_USER = { name: 'node', uid: 1000, gid: 1000, home: '/home/node' } as const;

/**
 * The package files `ddbench` needs at run time: the bundles (esbuild put every
 * dependency in them, so no node_modules), the bug set, package.json (the package root
 * and version) and the webview bundles the timeline's HTML export inlines. Source maps
 * stay out. The root .dockerignore lets exactly these through (a test compares them).
 */
export const CLI_PACKAGE_FILES = ['package.json', 'LICENSE', 'bin/ddbench.js', 'dist/cli.js', 'dist/sim-child.js', 'dist/sim-worker.js', 'dist/runtime/live-host.js'] as const;
export const CLI_PACKAGE_TREES = [
  { dir: 'dist/media', keep: (rel: string) => /\.(js|css)$/.test(rel) },
  { dir: 'bugs', keep: () => true },
] as const;

/** Bumped when the layout below changes, so an image of an older layout is not reused. */
const RECIPE = 'ddbench-cli-rootfs-1';

const NSSWITCH = 'passwd: files\ngroup: files\nhosts: files dns\n';

function passwd(): string {
  const u = IMAGE_USER;
  return `root:x:0:0:root:/root:/bin/sh\n${u.name}:x:${u.uid}:${u.gid}::${u.home}:/bin/sh\n`;
}

/** The package's files for the image, relative to the package root; a missing bundle says to build first. */
export function cliPackageFiles(root: string = packageRoot()): string[] {
  const missing = CLI_PACKAGE_FILES.filter((f) => !fs.existsSync(path.join(root, f)));
  if (missing.length) throw new UserError(`${missing.join(', ')} missing in ${root}: run \`npm run build\` there first`);
  const files: string[] = [...CLI_PACKAGE_FILES];
  for (const t of CLI_PACKAGE_TREES) {
    const dir = path.join(root, t.dir);
    if (!fs.existsSync(dir)) continue;
    for (const rel of listFiles(dir)) if (t.keep(rel)) files.push(`${t.dir}/${rel}`);
  }
  return files.sort();
}

/** The CLI image's rootfs, from this machine's programs and the package at `root`. */
export async function collectCliRootfs(root: string = packageRoot()): Promise<Rootfs> {
  const bwrap = onPath('bwrap');
  if (bwrap === undefined) {
    throw new UserError('bubblewrap is not installed here (Debian/Ubuntu: apt-get install bubblewrap); the CLI image carries it to sandbox the code under verification (docs/security.md), so it is built only with it');
  }
  const sh = fs.existsSync('/bin/sh') ? '/bin/sh' : onPath('sh');
  const env = fs.existsSync('/usr/bin/env') ? '/usr/bin/env' : onPath('env');
  if (sh === undefined || env === undefined) throw new UserError('no /bin/sh or /usr/bin/env on this machine to put in the CLI image');
  const b = await new RootfsBuilder().node();
  await b.binary(sh, '/bin/sh');
  await b.binary(env, '/usr/bin/env');
  await b.binary(bwrap, '/usr/bin/bwrap');
  for (const rel of cliPackageFiles(root)) {
    const source = path.join(root, rel);
    b.file(source, `${PACKAGE_IN_IMAGE}/${rel}`, rel.startsWith('bin/') || (fs.statSync(source).mode & 0o111) !== 0 ? 0o755 : 0o644);
  }
  const u = IMAGE_USER;
  return b
    .symlink('/usr/local/bin/ddbench', `${PACKAGE_IN_IMAGE}/bin/ddbench.js`)
    .dir('/tmp', 0o1777)
    .dir('/etc')
    .dir('/root', 0o700)
    .dir(u.home, 0o755, { uid: u.uid, gid: u.gid })
    .text('/etc/passwd', passwd())
    .text('/etc/group', `root:x:0:\n${u.name}:x:${u.gid}:\n`)
    .text('/etc/nsswitch.conf', NSSWITCH)
    .text('/etc/hosts', '127.0.0.1 localhost\n')
    .build();
}

export interface CliImage {
  ref: string;
  /** Whether this call imported it (false: the engine had it, by its content hash). */
  built: boolean;
  durationMs: number;
  sizeBytes: number;
}

/**
 * Builds (or finds, by content hash) the CLI image on the engine: `ddbench-cli:<hash>`.
 * Only the newest build is kept. The engine's image store is the cache, outside any clone.
 */
export async function buildCliImage(docker: Docker, opts: { root?: string; onProgress?(message: string): void } = {}): Promise<CliImage> {
  const started = Date.now();
  const root = opts.root ?? packageRoot();
  const spec: RootfsImageSpec = {
    repo: CLI_REPO,
    recipe: RECIPE,
    source: root,
    collect: () => collectCliRootfs(root),
    changes: [`ENV HOME=${IMAGE_USER.home}`, `USER ${IMAGE_USER.name}`, `WORKDIR ${IMAGE_USER.home}`, 'CMD ["ddbench", "--help"]'],
    kind: 'cli',
    what: 'the ddbench CLI image',
  };
  const { ref, built } = await rootfsImage(docker, spec, opts.onProgress);
  const info = await docker.getImage(ref).inspect();
  return { ref, built, durationMs: Date.now() - started, sizeBytes: info.Size };
}
