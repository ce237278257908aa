// Hand-made study records for the study tests: every field set on purpose, so the
// tests can state the report's figures exactly.
import { randomUUID } from 'node:crypto';
import { SCHEMA_VERSION, type AttemptRecord, type Condition } from '../../src/core/study/schema';

const T0 = Date.parse('2026-03-02T10:00:00.000Z');

export const REF_FIX = ['--- a/src/total.mjs', '+++ b/src/total.mjs', '@@ -1,3 +1,3 @@', ' export function addTo(total, n) {', '-  return total + n + n;', '+  return total + n;', ' }', ''].join('\n');
/** Same change as REF_FIX, another way round: shares the removed line only. */
export const OTHER_FIX = ['--- a/src/total.mjs', '+++ b/src/total.mjs', '@@ -1,3 +1,3 @@', ' export function addTo(total, n) {', '-  return total + n + n;', '+  return n + total;', ' }', ''].join('\n');

interface Options {
  bug?: string;
  tier?: 1 | 2 | 3;
  status?: AttemptRecord['status'];
  minutes?: number;
  patch?: string | null;
  attempts?: number;
  id?: string;
  revision?: number;
  /** Hints the attempt took. */
  hints?: number;
  fromEdits?: boolean;
}

function base(o: Options, actor: AttemptRecord['actor']): AttemptRecord {
  const status = o.status ?? 'verified';
  const ms = (o.minutes ?? 10) * 60_000;
  const patch = o.patch === undefined ? REF_FIX : o.patch;
  return {
    v: SCHEMA_VERSION,
    type: 'attempt',
    id: o.id ?? randomUUID(),
    revision: o.revision ?? 1,
    bug: { id: o.bug ?? 'bug-a', system: 'counter', tier: o.tier ?? 1 },
    actor,
    status,
    startedAt: new Date(T0).toISOString(),
    ...(status !== 'in-progress' && { endedAt: new Date(T0 + ms).toISOString() }),
    verifications: [],
    hints: Array.from({ length: o.hints ?? 0 }, (_, i) => ({ level: i + 1, at: new Date(T0 + (i + 1) * 60_000).toISOString(), elapsedMs: (i + 1) * 60_000 })),
    ...(o.fromEdits && { startedFromEdits: true }),
    attempts: o.attempts ?? 1,
    ...(status === 'verified' && { timeToFixMs: ms }),
    patch: patch === null ? null : { diff: patch, files: ['src/total.mjs'], added: 1, removed: 1 },
  };
}

export function human(participant: string, o: Options = {}): AttemptRecord {
  return base(o, { kind: 'human', participant, consent: { at: new Date(T0).toISOString(), textSha256: 'a'.repeat(64), interactionLog: true }, agentAllowed: false, hintsAllowed: false });
}

export function agent(model: string, condition: Condition, o: Options & { tokens?: number; costUsd?: number; key?: string } = {}): AttemptRecord {
  return {
    ...base(o, { kind: 'agent', model, condition, protocol: 'tools', endpoint: { kind: 'local', host: '127.0.0.1' } }),
    agent: { steps: 5, promptTokens: (o.tokens ?? 1000) - 100, completionTokens: 100, tokens: o.tokens ?? 1000, tokensEstimated: false, costUsd: o.costUsd ?? 0.01, priced: true, stopReason: o.status === 'verified' || o.status === undefined ? 'verified' : 'attempt-limit' },
    ...(o.key && { bench: { key: o.key, repeat: 0 } }),
  };
}

/** `n` runs of which the first `passed` are verified. */
export function runs(n: number, passed: number, make: (status: AttemptRecord['status'], i: number) => AttemptRecord): AttemptRecord[] {
  return Array.from({ length: n }, (_, i) => make(i < passed ? 'verified' : 'not-verified', i));
}
