import { z } from 'zod';
import * as fs from 'node:fs/promises';
import { UserError } from '../errors';
import { FaultProfile } from './fault-profile';
import { UpstreamSpec } from './upstream-spec';

const Id = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and dashes');
const JsonValue: z.ZodType<import('../../runtime/types').Json> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(JsonValue), z.record(z.string(), JsonValue)]),
);

/** An argument's type in a client operation; a trailing `?` makes it optional. */
export const ArgSpec = z.string().regex(/^(string|number|boolean|json)\??$/, 'string, number, boolean or json, with ? when optional');

/**
 * A client operation the system answers (its RPCs), for the editor's request console and
 * `ddbench up`: the message type, what it does, and its body's fields with their types.
 */
export const ClientOperation = z.strictObject({
  type: z.string().regex(/^[A-Za-z][A-Za-z0-9]*$/, 'a message type: letters and digits'),
  doc: z.string().min(1),
  args: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), ArgSpec).default({}),
  /** Which nodes take it, in words ("the leader", "the NameNode"); absent: any node. */
  to: z.string().min(1).optional(),
  /** An upstream system's HTTP API for it: the body is POSTed as JSON to this path on the named port. */
  http: z.strictObject({ port: z.string().min(1), path: z.string().startsWith('/') }).optional(),
  /**
   * An upstream system's NATS API for it (instead of `http`): a request on this subject,
   * its `{field}`s filled from the body's fields, sent over the NATS text protocol to the
   * named port; the body's `payload` is the message (a string as is, anything else as
   * JSON) and its `headers` the message headers. The reply is `{ status, headers, data }`.
   */
  nats: z.strictObject({ port: z.string().min(1), subject: z.string().regex(/^[^\s]+$/, 'a subject: no spaces') }).optional(),
  /**
   * An upstream system's Redis API for it (instead of `http` or `nats`): one command sent
   * over RESP to the named port, its words given here. A word that is `{field}` is the
   * body's field (a string or number; an array of them stands for that many words);
   * `{field}` inside a word is filled in; `{ip:field}` is the address of the node the field
   * names and `{port:name}` a named port's number (CLUSTER MEET's arguments). The reply is
   * `{ status, data }`: 200 and the command's reply (arrays as arrays, nil as null), or
   * 400 and `error` for an error reply (MOVED, CLUSTERDOWN, ...).
   */
  redis: z.strictObject({ port: z.string().min(1), command: z.array(z.string().min(1)).min(1) }).optional(),
});
export type ClientOperation = z.infer<typeof ClientOperation>;

export const SystemManifest = z.strictObject({
  id: Id,
  name: z.string().min(1),
  description: z.string().min(1),
  modelledAfter: z.strictObject({ project: z.string().min(1), url: z.url() }),
  /** The system module, relative to the system folder (a miniature; an upstream system has `upstream` instead). */
  entry: z.string().min(1).optional(),
  /** A real upstream system built from Debian's sources (bug kind `upstream`): live only. */
  upstream: UpstreamSpec.optional(),
  /** The client operations a person can send from the request console. */
  client: z.array(ClientOperation).default([]),
  nodes: z.array(Id).min(1),
  config: z.record(z.string(), JsonValue).default({}),
  /** The system's own regression scenarios (names of files in scenarios/). */
  tests: z.array(Id).default([]),
  /** How the docker backend runs the system's nodes; without it they run in DDBench's node image. */
  docker: z
    .strictObject({
      /** An image to run as is; it must have `node` on PATH (the live host runs in it). */
      image: z.string().min(1).optional(),
      /** A Dockerfile context folder, relative to the system folder; its FROM may use the build arg DDBENCH_NODE_IMAGE. */
      context: z.string().min(1).optional(),
      /** The Dockerfile's name inside the context (default Dockerfile). */
      dockerfile: z.string().min(1).optional(),
      /** Resource limits for every node (the user's own limits win). */
      limits: z
        .strictObject({
          memoryMb: z.number().int().min(16).optional(),
          cpus: z.number().positive().optional(),
          pids: z.number().int().min(16).optional(),
        })
        .optional(),
    })
    .refine((d) => d.image === undefined || d.context === undefined, 'give either image or context, not both')
    .optional(),
}).refine((m) => (m.entry === undefined) !== (m.upstream === undefined), { message: 'give entry (a miniature) or upstream (a real system), not both', path: ['entry'] });
export type SystemManifest = z.infer<typeof SystemManifest>;

export const Tier = z.union([z.literal(1), z.literal(2), z.literal(3)]);
export type Tier = z.infer<typeof Tier>;

export const Category = z.enum([
  'message-order',
  'message-loss',
  'crash',
  'restart',
  'durability',
  'partition',
  'election',
  'lease',
  'clock',
  'membership',
  'gossip',
  'replication',
]);

/**
 * How the upstream project stands on the fix whose idea the reference fix follows:
 * fixed (merged), open (the issue is open; the fix is the idea its maintainers endorsed),
 * unmerged (the fix comes from a pull request that was never merged), redesign (the issue
 * was closed by a rewrite; the reference fix follows the rewrite's idea, not a patch to the
 * code the issue was about), unsourced (no upstream commit or pull request for the idea was found).
 */
export const FixStatus = z.enum(['fixed', 'open', 'unmerged', 'redesign', 'unsourced']);
export type FixStatus = z.infer<typeof FixStatus>;

const OneLine = z.string().min(1).regex(/^[^\n]*$/, 'one line');

/** The upstream bug a re-creation follows, and the upstream fix whose idea its reference fix is. */
export const Upstream = z
  .strictObject({
    project: z.string().min(1),
    /** The upstream issue: a JIRA key or owner/repo#N. */
    id: z.string().min(1),
    url: z.url(),
    fix: z.strictObject({
      /** The fixing commit (sha) or pull request; for JIRA-era fixes whose commit is not at hand, the issue key whose committed patch it is. */
      ref: z.string().min(1),
      url: z.url(),
      /** What the upstream fix did: facts, never code. */
      summary: OneLine,
    }),
    status: FixStatus,
    /** The mechanism the bug re-creates, in one line: the interleaving, fault or timing and what it breaks. */
    mechanism: OneLine,
    /** Where the re-creation departs from the upstream issue or its fix; required for redesign and unsourced. */
    differs: OneLine.optional(),
  })
  .refine((u) => (u.status !== 'redesign' && u.status !== 'unsourced') || u.differs !== undefined, {
    message: 'a redesign or unsourced fix says in differs what is missing',
    path: ['differs'],
  });
export type Upstream = z.infer<typeof Upstream>;

export const BugManifest = z.strictObject({
  id: Id,
  title: z.string().min(1),
  /** What the bug needs to show, from its failing run's faults (fault-profile.ts): 1 message-level faults only, 2 one kind of node-level fault, 3 two or more. */
  tier: Tier,
  /** The fault kinds a failing simulated run of the reproducer injects; test/bugs/tiers.test.ts derives and checks them. */
  faults: FaultProfile,
  categories: z.array(Category).min(1),
  modelledAfter: Upstream,
  reproducer: z.strictObject({
    scenario: Id,
    trials: z.number().int().min(1).max(1000).default(10),
  }),
  /** The system tests that must keep passing (SWE-bench's PASS_TO_PASS). */
  regression: z.array(Id).default([]),
  context: z.strictObject({
    capture: z.strictObject({
      nodes: z.array(z.string()).optional(),
      kinds: z.array(z.string()).optional(),
      maxEvents: z.number().int().positive().default(400),
      state: z.boolean().default(true),
    }),
    /** Investigation notes: they point at evidence (logs, traces, state), never at the fix. */
    notes: z.array(z.string().min(1)).min(3).max(5),
  }),
  /** A graded ladder, never shown to the agent: where to look, what evidence to read, the mechanism, the fix idea (the last may name the fix). */
  hints: z.array(z.string().min(1)).min(3).max(5),
  /**
   * Names the leak check (test/bugs/leaks.test.ts) must not report although the buggy code
   * leaves them unused and the fix uses them: an upstream API the buggy version also had.
   */
  keep: z.array(z.strictObject({ name: z.string().min(1), why: z.string().min(1) })).default([]),
  /**
   * A bug of a real upstream system only: node flags the bug needs that are off by default
   * (`--pre-vote`), appended to the system's node command line (same placeholders) wherever
   * this bug's cluster starts. They are configuration a user would report, so ISSUE.md may name them.
   */
  upstream: z.strictObject({ args: z.array(z.string().min(1)).min(1) }).optional(),
  /** The bug of the other kind (upstream or miniature) that re-creates the same upstream mechanism; each names the other. */
  twin: Id.optional(),
  /** The bug offered first to a newcomer (the editor's walkthrough): a tier-1 bug whose reproducer is quick. One in a set. */
  starter: z.boolean().default(false),
});
export type BugManifest = z.infer<typeof BugManifest>;

export type Difficulty = 'easy' | 'medium' | 'hard';
/** Difficulty is the tier's name, so the two cannot disagree. */
export function difficultyOf(tier: Tier): Difficulty {
  return tier === 1 ? 'easy' : tier === 2 ? 'medium' : 'hard';
}

/** Reads and validates a JSON manifest; errors name the file and each bad field. */
export async function readManifest<T>(file: string, schema: z.ZodType<T>): Promise<T> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new UserError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UserError(`${file}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  ${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
    throw new UserError(`${file}: invalid manifest\n${problems.join('\n')}`);
  }
  return parsed.data;
}
