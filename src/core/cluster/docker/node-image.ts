import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import { UserError } from '../../errors';
import { followProgress, idempotent, statusOf } from './engine';
import { collectRootfs, hashRootfs, listFiles, packRootfs, statKey, type Rootfs } from './rootfs';

/**
 * Which image the nodes run in, in this order: the system's own image or Dockerfile
 * (system.json `docker`), the configured one (ddbench.docker.image / --docker-image),
 * else one built here from this machine's Node.js. Every image must have `node` on
 * PATH: the live host runs in it. Built images are cached by a hash of their content,
 * and only the newest of each kind is kept.
 */

/** A system's docker section (system.json), with the system's folder to resolve the context against. */
export interface SystemImageSpec {
  id: string;
  dir: string;
  image?: string;
  /** Dockerfile context folder, relative to the system folder. */
  context?: string;
  dockerfile?: string;
}

export interface ImageOptions {
  configured?: string;
  system?: SystemImageSpec;
  /** Told about slow steps (building, pulling), for the timeline and progress output. */
  onProgress?(message: string): void;
}

export type ImageOrigin = 'system image' | 'system Dockerfile' | 'configured' | 'built';

export interface NodeImage {
  ref: string;
  origin: ImageOrigin;
}

export const BUILT_REPO = 'ddbench-node';
/** On every image DDBench makes, so its own leftovers can be told from other users' images. */
export const IMAGE_LABEL = 'ddbench.image';
const TEMP_PREFIX = 'tmp-';
const PATH_ENV = 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin';

/** Builds in progress or done in this process, by cache key, so concurrent trials build once. */
const builds = new Map<string, Promise<string>>();

function memo(key: string, build: () => Promise<string>): Promise<string> {
  let pending = builds.get(key);
  if (pending === undefined) {
    pending = build();
    builds.set(key, pending);
    // A failed build is tried again next time rather than remembered.
    pending.catch(() => builds.delete(key));
  }
  return pending;
}

async function exists(docker: Docker, ref: string): Promise<boolean> {
  try {
    await docker.getImage(ref).inspect();
    return true;
  } catch (err) {
    if (statusOf(err) === 404) return false;
    throw err;
  }
}

/** Removes the other tags of `repo` (older builds, not another process's build in progress); one still in use stays. */
async function pruneOthers(docker: Docker, repo: string, keep: string): Promise<void> {
  const images = await docker.listImages({ filters: { reference: [`${repo}:*`] } });
  for (const image of images) {
    for (const tag of image.RepoTags ?? []) {
      if (tag !== keep && !tag.startsWith(`${repo}:${TEMP_PREFIX}`)) await idempotent(() => docker.getImage(tag).remove());
    }
  }
}

/**
 * Tags a freshly made image (under a temporary tag) as `repo:tag`, then drops the
 * temporary tag. If another process made the same image at the same time, the tag
 * ends on one of them and the other loses its last tag, which deletes it: no
 * untagged image is left behind, and no lock is needed.
 */
async function publish(docker: Docker, repo: string, tempTag: string, tag: string): Promise<string> {
  const temp = docker.getImage(`${repo}:${tempTag}`);
  await temp.tag({ repo, tag });
  await idempotent(() => temp.remove());
  const ref = `${repo}:${tag}`;
  await pruneOthers(docker, repo, ref);
  return ref;
}

function tempTag(): string {
  return `${TEMP_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** An image made by `docker import` of a rootfs assembled on this machine (rootfs.ts). */
export interface RootfsImageSpec {
  repo: string;
  /** Bumped when the layout changes, so an image built by an older recipe is not reused. */
  recipe: string;
  collect(): Promise<Rootfs>;
  /** Where collect() takes its files from, when that varies (a package root): rootfs collections are remembered by it. */
  source?: string;
  /** `docker import --change` lines (ENV, USER, WORKDIR, ...); PATH and the image label are added. */
  changes?: string[];
  /** The image label's value: what kind of image this is. */
  kind: string;
  /** For progress messages. */
  what: string;
}

/** Rootfs collections by image and source: running ldd is slow on a loaded machine and its answer does not change while we run. */
const collected = new Map<string, Promise<Rootfs>>();

/**
 * The image of `spec`, tagged `repo:<16 hex digits of its content hash>`: reused when the
 * engine has it, else imported (under a temporary tag, then published) with the older
 * builds of `repo` removed. `built` says whether this call imported it.
 */
export async function rootfsImage(docker: Docker, spec: RootfsImageSpec, progress: (m: string) => void = () => undefined): Promise<{ ref: string; built: boolean }> {
  const which = `${spec.repo}\0${spec.recipe}\0${spec.source ?? ''}`;
  let pending = collected.get(which);
  if (pending === undefined) {
    pending = spec.collect();
    collected.set(which, pending);
    pending.catch(() => collected.delete(which));
  }
  const rootfs = await pending;
  const key = `${which}\0${statKey(rootfs)}`;
  let built = false;
  const ref = await memo(key, async () => {
    const tag = (await hashRootfs(spec.recipe, rootfs)).slice(0, 16);
    const ref = `${spec.repo}:${tag}`;
    if (await exists(docker, ref)) return ref;
    progress(`building ${spec.what} ${ref} from this machine's files (once; it is cached)`);
    built = true;
    const temp = tempTag();
    const output = await docker.importImage(packRootfs(rootfs), {
      repo: spec.repo,
      tag: temp,
      changes: [PATH_ENV, ...(spec.changes ?? []), `LABEL ${IMAGE_LABEL}=${spec.kind}`],
    });
    await followProgress(docker, output);
    return publish(docker, spec.repo, temp, tag);
  });
  if (await exists(docker, ref)) return { ref, built };
  // Someone removed the cached image while we ran: build it again.
  builds.delete(key);
  return rootfsImage(docker, spec, progress);
}

const NODE_IMAGE: RootfsImageSpec = { repo: BUILT_REPO, recipe: 'ddbench-node-rootfs-2', collect: collectRootfs, kind: 'node', what: 'the node image' };

async function builtNodeImage(docker: Docker, progress: (m: string) => void): Promise<string> {
  return (await rootfsImage(docker, NODE_IMAGE, progress)).ref;
}

/** Builds a system's Dockerfile context; its FROM may use the build arg DDBENCH_NODE_IMAGE (the built node image). */
async function systemDockerfileImage(docker: Docker, spec: SystemImageSpec & { context: string }, progress: (m: string) => void): Promise<string> {
  const context = path.resolve(spec.dir, spec.context);
  if (!fs.existsSync(context)) throw new UserError(`${spec.id}: docker context ${context} (system.json docker.context) does not exist`);
  const dockerfile = spec.dockerfile ?? 'Dockerfile';
  const files = listFiles(context);
  if (!files.includes(dockerfile)) throw new UserError(`${spec.id}: no ${dockerfile} in the docker context ${context}`);
  const base = await builtNodeImage(docker, progress);
  const hash = createHash('sha256').update(base);
  for (const f of files) hash.update(`\0${f}\0`).update(fs.readFileSync(path.join(context, f)));
  const repo = `ddbench-${spec.id}`;
  const tag = hash.digest('hex').slice(0, 16);
  return memo(`dockerfile\0${repo}:${tag}`, async () => {
    const ref = `${repo}:${tag}`;
    if (await exists(docker, ref)) return ref;
    progress(`building ${ref} from ${path.join(context, dockerfile)}`);
    const temp = tempTag();
    const output = await docker.buildImage(
      { context, src: files },
      { t: `${repo}:${temp}`, dockerfile, buildargs: { DDBENCH_NODE_IMAGE: base }, labels: { [IMAGE_LABEL]: spec.id }, rm: true, forcerm: true },
    );
    await followProgress(docker, output);
    return publish(docker, repo, temp, tag);
  });
}

/** Uses an image as named, pulling it when it is not here yet. */
async function namedImage(docker: Docker, ref: string, what: string, progress: (m: string) => void): Promise<string> {
  if (await exists(docker, ref)) return ref;
  progress(`pulling ${ref}`);
  try {
    await followProgress(docker, await docker.pull(ref));
  } catch (err) {
    throw new UserError(
      `the ${what} ${ref} is not on this Docker engine and pulling it failed (${err instanceof Error ? err.message : String(err)}). Pull or build it yourself, or leave the image unset to have DDBench build a node image from this machine's Node.js.`,
    );
  }
  return ref;
}

export async function resolveNodeImage(docker: Docker, opts: ImageOptions): Promise<NodeImage> {
  const progress = opts.onProgress ?? (() => undefined);
  const system = opts.system;
  if (system?.image !== undefined) return { ref: await namedImage(docker, system.image, `image of system ${system.id}`, progress), origin: 'system image' };
  if (system?.context !== undefined) return { ref: await systemDockerfileImage(docker, { ...system, context: system.context }, progress), origin: 'system Dockerfile' };
  if (opts.configured !== undefined && opts.configured !== '') return { ref: await namedImage(docker, opts.configured, 'configured image', progress), origin: 'configured' };
  return { ref: await builtNodeImage(docker, progress), origin: 'built' };
}
