import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { Protocol } from '../agent/config';
import { BUG_KINDS, type Catalog } from '../bugs/catalog';
import { UserError } from '../errors';
import { Isolation } from '../sandbox/levels';
import { DEFAULT_REPORT_SEED } from './report';
import { Condition } from './schema';

/**
 * A study written down once (`study.json`): which bugs (by id, or a selection by tier,
 * category or system), which models at which endpoints (the name of the variable that
 * holds each key, never a key), the conditions, repeats, limits, live trials, the seed
 * of the report's intervals and the isolation verification must have. `ddbench bench
 * --study` runs it and stamps every record with its hash; `ddbench report --study`
 * reports those records only. Versioned: a file of another version is refused with
 * what to change.
 */

export const STUDY_FILE_VERSION = 1;

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name (the key itself never goes in a study file)');

export const StudyModel = z.strictObject({
  /** As the endpoint names it. */
  name: z.string().min(1),
  /** OpenAI-compatible base URL; default: the bench's (--base-url, $DDBENCH_BASE_URL, else OpenAI). */
  baseUrl: z.url().optional(),
  /** The environment variable holding this endpoint's key. */
  apiKeyEnv: EnvName.optional(),
  protocol: Protocol.optional(),
});

const Tier = z.union([z.literal(1), z.literal(2), z.literal(3)]);

export const StudyFile = z.strictObject({
  v: z.literal(STUDY_FILE_VERSION, { error: `only study files of version ${STUDY_FILE_VERSION} ("v": ${STUDY_FILE_VERSION}) are read` }),
  name: z.string().min(1).max(100),
  description: z.string().max(2000).optional(),
  /** Bug ids, "all", or a selection (every given criterion must hold). */
  bugs: z.union([
    z.literal('all'),
    z.array(z.string().min(1)).min(1),
    z.strictObject({ kinds: z.array(z.enum(BUG_KINDS)).min(1).optional(), tiers: z.array(Tier).min(1).optional(), categories: z.array(z.string().min(1)).min(1).optional(), systems: z.array(z.string().min(1)).min(1).optional() }),
  ]),
  models: z.array(StudyModel).min(1),
  conditions: z.array(Condition).min(1).default(['symptom-only', 'context-augmented']),
  repeats: z.number().int().min(1).max(100).default(1),
  limits: z.strictObject({ maxSteps: z.number().int().min(1).optional(), maxAttempts: z.number().int().min(1).optional(), maxCostUsd: z.number().positive().optional() }).default({}),
  /** Live trials per verification; default: each bug's. */
  trials: z.number().int().min(1).max(1000).optional(),
  /** The seed plan: the report's bootstrap seed (runs are deterministic by bug, model, condition and repeat). */
  seeds: z.strictObject({ report: z.number().int().min(0).default(DEFAULT_REPORT_SEED) }).default({ report: DEFAULT_REPORT_SEED }),
  /** Verification must run at least this isolated (docs/security.md). */
  isolation: Isolation.optional(),
});
export type StudyFile = z.infer<typeof StudyFile>;

/** Reads and checks a study file; every problem is named with its field. */
export function readStudyFile(file: string): StudyFile {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UserError(`${file}: not a study file: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = StudyFile.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 8).map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`);
    throw new UserError(`${file}: not a valid study file: ${problems.join('; ')} (docs/studies.md, "Study files")`);
  }
  return parsed.data;
}

/** JSON with keys sorted at every level, so the same study hashes alike however it was written. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The study's identity in records: 16 hex digits of the SHA-256 of its canonical form (defaults filled in). */
export function studyHash(study: StudyFile): string {
  return createHash('sha256').update(canonical(study)).digest('hex').slice(0, 16);
}

/** The bug ids a study names, in the catalogue's order; an unknown id or an empty selection is an error. */
export function studyBugs(study: StudyFile, catalog: Catalog): string[] {
  const all = catalog.bugs.map((b) => b.id);
  if (study.bugs === 'all') return all;
  if (Array.isArray(study.bugs)) {
    const missing = study.bugs.filter((id) => !all.includes(id));
    if (missing.length) throw new UserError(`the study names bugs the set does not have: ${missing.join(', ')} (ddbench bugs lists them)`);
    return all.filter((id) => (study.bugs as string[]).includes(id));
  }
  const { kinds, tiers, categories, systems } = study.bugs;
  const chosen = catalog.bugs.filter((b) => (kinds === undefined || kinds.includes(b.kind)) && (tiers === undefined || tiers.includes(b.tier)) && (categories === undefined || categories.some((c) => b.categories.includes(c))) && (systems === undefined || systems.includes(b.system))).map((b) => b.id);
  if (!chosen.length) throw new UserError(`the study's bug selection ${JSON.stringify(study.bugs)} matches no bug of the set`);
  return chosen;
}

/** The bug set's identity: the SHA-256 (16 hex digits) of every bug's manifest, patch and source, by id. */
export function bugSetHash(catalog: Catalog): string {
  const hash = createHash('sha256');
  for (const bug of [...catalog.bugs].sort((a, b) => a.id.localeCompare(b.id))) {
    hash.update(`${bug.id}\n`);
    for (const name of ['bug.json', 'bug.patch']) hash.update(fs.readFileSync(path.join(bug.dir, name)));
  }
  for (const system of [...catalog.systems].sort((a, b) => a.id.localeCompare(b.id))) hashTree(hash, system.dir);
  return hash.digest('hex').slice(0, 16);
}

function hashTree(hash: ReturnType<typeof createHash>, dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) hashTree(hash, full);
    else if (entry.isFile()) hash.update(`${entry.name}\n`).update(fs.readFileSync(full));
  }
}

/** Where a report was made: enough to tell two machines' runs apart. */
export function environmentOf(): string {
  return `Node.js ${process.version} on ${process.platform}/${process.arch}, ${os.cpus().length} CPU(s), ${Math.round(os.totalmem() / 2 ** 30)} GiB`;
}
