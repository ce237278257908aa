import { z } from 'zod';
import { patchStat } from './patch-metrics';
import { AttemptRecord, Condition, SCHEMA_VERSION, StudyLine, type AttemptStatus } from './schema';

/**
 * Older record versions and their upgrades. A reader accepts every version it knows,
 * upgrading each line to the current schema as it reads it; files on disk are never
 * rewritten. A newer version than this reader knows is reported, not guessed at.
 *
 * v1 is the first, minimal shape: one line per finished attempt, no interaction log,
 * no per-verification detail. Kept so records from early studies still count.
 */
export const AttemptV1 = z.object({
  v: z.literal(1),
  id: z.string().min(8).max(64),
  bugId: z.string().min(1),
  actor: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('human'), participant: z.string() }),
    z.object({ kind: z.literal('agent'), model: z.string().min(1), condition: Condition }),
  ]),
  startedAt: z.iso.datetime({ offset: true }),
  endedAt: z.iso.datetime({ offset: true }).optional(),
  verified: z.boolean(),
  gaveUp: z.boolean().default(false),
  attempts: z.number().int().min(0),
  patch: z.string().nullable().default(null),
  tokens: z.number().int().min(0).optional(),
  costUsd: z.number().min(0).optional(),
});
export type AttemptV1 = z.infer<typeof AttemptV1>;

/** v1 → v2: the same facts under their new names; what v1 never recorded stays absent. */
export function upgradeV1(r: AttemptV1): AttemptRecord {
  const status: AttemptStatus = r.verified ? 'verified' : r.gaveUp ? 'gave-up' : 'not-verified';
  const actor =
    r.actor.kind === 'human'
      ? { kind: 'human' as const, participant: r.actor.participant, agentAllowed: false }
      : { kind: 'agent' as const, model: r.actor.model, condition: r.actor.condition };
  const durationMs = r.endedAt ? Math.max(0, Date.parse(r.endedAt) - Date.parse(r.startedAt)) : undefined;
  // Through the v2 schema, so an upgraded record meets every rule a written one does.
  return AttemptRecord.parse({
    v: SCHEMA_VERSION,
    type: 'attempt',
    id: r.id,
    revision: 0,
    bug: { id: r.bugId },
    actor,
    status,
    startedAt: r.startedAt,
    ...(r.endedAt && { endedAt: r.endedAt }),
    verifications: [],
    attempts: r.attempts,
    ...(r.verified && durationMs !== undefined && { timeToFixMs: durationMs }),
    patch: r.patch === null ? null : { diff: r.patch, ...patchStat(r.patch) },
    ...(r.actor.kind === 'agent' && {
      agent: {
        steps: 0,
        promptTokens: 0,
        completionTokens: 0,
        tokens: r.tokens ?? 0,
        tokensEstimated: r.tokens === undefined,
        costUsd: r.costUsd ?? 0,
        priced: r.costUsd !== undefined,
        stopReason: r.verified ? 'verified' : 'unknown',
      },
    }),
  });
}

export type LineProblemKind = 'invalid-json' | 'invalid-record' | 'unknown-version' | 'newer-version';

export type ParsedLine = { ok: true; line: StudyLine; upgradedFrom?: number } | { ok: false; kind: LineProblemKind; message: string };

/** A parsed JSON value as a record of the current version, upgrading old ones. */
export function parseStudyLine(raw: unknown): ParsedLine {
  const v = typeof raw === 'object' && raw !== null && 'v' in raw ? (raw as { v: unknown }).v : undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) return { ok: false, kind: 'unknown-version', message: 'no schema version ("v") in the record' };
  if (v > SCHEMA_VERSION) {
    return { ok: false, kind: 'newer-version', message: `written with schema v${v}; this ddbench reads up to v${SCHEMA_VERSION} — update ddbench to read it` };
  }
  if (v === 1) {
    const old = AttemptV1.safeParse(raw);
    if (!old.success) return { ok: false, kind: 'invalid-record', message: `v1: ${issues(old.error)}` };
    try {
      return { ok: true, line: upgradeV1(old.data), upgradedFrom: 1 };
    } catch (err) {
      return { ok: false, kind: 'invalid-record', message: `v1 upgrade: ${err instanceof z.ZodError ? issues(err) : String(err)}` };
    }
  }
  const cur = StudyLine.safeParse(raw);
  return cur.success ? { ok: true, line: cur.data } : { ok: false, kind: 'invalid-record', message: issues(cur.error) };
}

function issues(err: z.ZodError): string {
  return err.issues
    .slice(0, 4)
    .map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
    .join('; ');
}
