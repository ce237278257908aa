import { z } from 'zod';

const Name = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._+-]*$/, 'a package, binary or variable name');
/** A path inside the build root (relative, no `..`). */
/** A Redis command as its words (`["CLUSTER", "NODES"]`). */
const RedisCommand = z.array(z.string().min(1)).min(1);
const Inner = z.string().min(1).refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'a relative path without ..');

/**
 * How DDBench gets, builds and runs a real upstream system (bug kind `upstream`): the
 * Debian packages that hold its pinned source and toolchain, the build inside the
 * sandbox, and the command line of one node. Placeholders in strings: `{src}` the build's
 * copy of the workspace source, `{out}` the folder the build writes to, `{cache}` the
 * user's build cache; for a node, `{id}`, `{dataDir}`, `{ip}`, `{ip:<node>}` and each named
 * port as `{port:<name>}`.
 */
export const UpstreamSpec = z.strictObject({
  /** The upstream release the source is (the Debian package's upstream version). */
  version: z.string().min(1),
  debian: z.strictObject({
    /** Installed by `ddbench setup upstream`: the source package and the toolchain. */
    packages: z.array(Name).min(1),
    /**
     * The Debian package that is the source, its pinned version, and how the source comes:
     * `installed`, the files of that (binary) package once installed (etcd's Go source in
     * golang-etcd-server-dev); `apt-source`, the source package itself, fetched with
     * `apt-get source package=version` and unpacked at `tree` by `ddbench setup upstream`
     * (which adds a deb-src entry for the machine's Debian suites when there is none).
     */
    source: z.strictObject({ package: Name, version: z.string().min(1), from: z.enum(['installed', 'apt-source']).default('installed') }),
  }),
  /** Where the source tree is (the workspace's src/ is a copy of it): where the package puts it, or where setup unpacks the source package. */
  tree: z.string().startsWith('/'),
  /**
   * A library has no server of its own: the program that runs it as a node, a folder of
   * the system's definition (`dir`) copied into the workspace's src/ at `into`, so it is
   * built, read and edited with the library's code.
   */
  host: z.strictObject({ dir: Inner, into: Inner }).optional(),
  build: z.strictObject({
    /** Where the workspace's src/ is visible inside the build root (GOPATH layout, say). */
    mount: Inner,
    command: z.array(z.string().min(1)).min(1),
    env: z.record(z.string(), z.string()).default({}),
    /** Variables naming folders under the user's cache kept between builds (GOCACHE: incremental Go builds). */
    caches: z.record(z.string(), Name).default({}),
    /** The files the build writes to {out}; the first is the node's binary. */
    outputs: z.array(Name).min(1),
    /**
     * A folder under the user's cache (by name) that the build runs in instead of the
     * read-only source: the source is mirrored into it (changed files rewritten, removed
     * ones deleted, build products kept) and it is mounted writable at `mount`. For build
     * systems that write beside the source (make), so a rebuild after an edit compiles
     * only what changed. Builds that share it take turns.
     */
    workTree: Name.optional(),
  }),
  node: z.strictObject({
    args: z.array(z.string()).min(1),
    /** Named ports every node listens on at its own address (`client`, `peer`). */
    ports: z.record(Name, z.number().int().min(1).max(65_535)),
    /**
     * What the harness polls until the node answers: an HTTP path on a port (any status
     * will do), or a Redis command (RESP) on a port (any reply will do, an error too).
     */
    ready: z.union([z.strictObject({ port: Name, path: z.string().startsWith('/') }), z.strictObject({ port: Name, redis: RedisCommand })]),
    /**
     * What shows the node's state (the Cluster view's state): an HTTP request (POST sends
     * `{}`), or Redis commands whose replies come keyed by the command.
     */
    state: z
      .union([
        z.strictObject({ port: Name, path: z.string().startsWith('/'), method: z.enum(['GET', 'POST']).default('GET') }),
        z.strictObject({ port: Name, redis: z.array(RedisCommand).min(1) }),
      ])
      .optional(),
  }),
  /** How the nodes' log lines read; the timeline's reader for them (zap's and hclog's JSON lines; nats-server's and redis-server's text lines). */
  logs: z.enum(['zap-json', 'hclog-json', 'nats-text', 'redis-text']),
});
export type UpstreamSpec = z.infer<typeof UpstreamSpec>;
