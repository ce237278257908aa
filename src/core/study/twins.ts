import { z } from 'zod';
import type { AttemptRecord } from './schema';
import { mcnemarExact, mean, median, newcombe, wilson } from './stats';

/**
 * Twins: a miniature bug and a bug in the real upstream code that re-create the same
 * upstream mechanism (docs/upstream-tier.md). The question they let a study ask is
 * whether repairing the miniature predicts repairing the real one. For each group
 * (people, or a model × condition) that attempted both: each side's pass rate and
 * efficiency, the real code's rate minus the miniature's with Newcombe's interval,
 * and the attempts paired across the two bugs — by repeat for an agent (the bench's
 * repeat number, else the k-th run of each bug), by participant for people — with
 * how often the outcomes agree and an exact McNemar test on the pairs that differ.
 */

const Interval = z.tuple([z.number(), z.number()]);

export const TwinSide = z.object({
  bugId: z.string(),
  n: z.number().int(),
  passed: z.number().int(),
  rate: z.number(),
  ci: Interval,
  /** Over fixed attempts: from start to the first verified fix. */
  medianTimeToFixMs: z.number().nullable(),
  /** Means over agent runs; null for people. */
  meanSteps: z.number().nullable(),
  meanTokens: z.number().nullable(),
});
export type TwinSide = z.infer<typeof TwinSide>;

export const TwinAgreement = z.object({
  pairs: z.number().int(),
  both: z.number().int(),
  miniatureOnly: z.number().int(),
  upstreamOnly: z.number().int(),
  neither: z.number().int(),
  /** Exact McNemar p on the discordant pairs (1 when there are none). */
  p: z.number(),
});
export type TwinAgreement = z.infer<typeof TwinAgreement>;

export const TwinGroup = z.object({
  /** An actor group's id, or `all groups` for every group's attempts pooled. */
  group: z.string(),
  miniature: TwinSide,
  upstream: TwinSide,
  /** The real code's pass rate minus the miniature's. */
  difference: z.number(),
  ci: Interval,
  agreement: TwinAgreement,
});
export type TwinGroup = z.infer<typeof TwinGroup>;

export const TwinComparison = z.object({
  miniature: z.string(),
  upstream: z.string(),
  groups: z.array(TwinGroup),
});
export type TwinComparison = z.infer<typeof TwinComparison>;

export const ALL_GROUPS = 'all groups';

export interface TwinPair {
  miniature: string;
  upstream: string;
}

/**
 * Every pair with finished attempts on both bugs; `attempts` are the finished ones and
 * `groupOf` names each one's actor group.
 */
export function compareTwins(pairs: readonly TwinPair[], attempts: readonly AttemptRecord[], groupOf: (a: AttemptRecord) => string): TwinComparison[] {
  return pairs.flatMap((pair) => {
    const mini = attempts.filter((a) => a.bug.id === pair.miniature);
    const real = attempts.filter((a) => a.bug.id === pair.upstream);
    const groups = [...new Set(mini.map(groupOf))].filter((g) => real.some((a) => groupOf(a) === g)).sort();
    if (!groups.length) return [];
    const perGroup = groups.map((g) =>
      compareGroup(
        g,
        pair,
        mini.filter((a) => groupOf(a) === g),
        real.filter((a) => groupOf(a) === g),
      ),
    );
    const inGroups = (xs: AttemptRecord[]) => xs.filter((a) => groups.includes(groupOf(a)));
    const pooled = groups.length > 1 ? [pooledGroup(pair, inGroups(mini), inGroups(real), perGroup)] : [];
    return [{ miniature: pair.miniature, upstream: pair.upstream, groups: [...perGroup, ...pooled] }];
  });
}

function compareGroup(group: string, pair: TwinPair, mini: AttemptRecord[], real: AttemptRecord[]): TwinGroup {
  // A person's first attempt on each bug; an agent's runs by repeat.
  const keyed = (xs: AttemptRecord[]) => {
    const out = new Map<string, boolean>();
    xs.forEach((a, i) => {
      const key = pairKey(a, i);
      if (!out.has(key)) out.set(key, solved(a));
    });
    return out;
  };
  const m = keyed(byStart(mini));
  const r = keyed(byStart(real));
  const outcomes = [...m].flatMap(([key, ms]) => (r.has(key) ? [[ms, r.get(key)!] as const] : []));
  const count = (f: (ms: boolean, rs: boolean) => boolean) => outcomes.filter(([ms, rs]) => f(ms, rs)).length;
  const agreement = {
    pairs: outcomes.length,
    both: count((ms, rs) => ms && rs),
    miniatureOnly: count((ms, rs) => ms && !rs),
    upstreamOnly: count((ms, rs) => !ms && rs),
    neither: count((ms, rs) => !ms && !rs),
  };
  return withSides(group, pair, mini, real, { ...agreement, p: mcnemarExact(agreement.miniatureOnly, agreement.upstreamOnly) });
}

/** Every group's attempts pooled; the pairs are each group's own, summed. */
function pooledGroup(pair: TwinPair, mini: AttemptRecord[], real: AttemptRecord[], perGroup: readonly TwinGroup[]): TwinGroup {
  const sum = (f: (a: TwinAgreement) => number) => perGroup.reduce((t, g) => t + f(g.agreement), 0);
  const miniatureOnly = sum((a) => a.miniatureOnly);
  const upstreamOnly = sum((a) => a.upstreamOnly);
  const agreement = { pairs: sum((a) => a.pairs), both: sum((a) => a.both), miniatureOnly, upstreamOnly, neither: sum((a) => a.neither), p: mcnemarExact(miniatureOnly, upstreamOnly) };
  return withSides(ALL_GROUPS, pair, mini, real, agreement);
}

function withSides(group: string, pair: TwinPair, mini: AttemptRecord[], real: AttemptRecord[], agreement: TwinAgreement): TwinGroup {
  const miniature = sideOf(pair.miniature, mini);
  const upstream = sideOf(pair.upstream, real);
  return { group, miniature, upstream, difference: upstream.rate - miniature.rate, ci: newcombe(upstream.passed, upstream.n, miniature.passed, miniature.n), agreement };
}

function sideOf(bugId: string, xs: readonly AttemptRecord[]): TwinSide {
  const passed = xs.filter(solved).length;
  const runs = xs.flatMap((a) => (a.agent ? [a.agent] : []));
  return {
    bugId,
    n: xs.length,
    passed,
    rate: xs.length ? passed / xs.length : 0,
    ci: wilson(passed, xs.length),
    medianTimeToFixMs: median(xs.flatMap((a) => (solved(a) && a.timeToFixMs !== undefined ? [a.timeToFixMs] : []))),
    meanSteps: mean(runs.map((u) => u.steps)),
    meanTokens: mean(runs.map((u) => u.tokens)),
  };
}

/** What pairs an attempt on one twin with one on the other, within a group. */
function pairKey(a: AttemptRecord, ordinal: number): string {
  if (a.actor.kind === 'human') return `participant ${a.actor.participant}`;
  return `repeat ${a.bench?.repeat ?? ordinal}`;
}

function byStart(xs: readonly AttemptRecord[]): AttemptRecord[] {
  return [...xs].sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.id.localeCompare(b.id));
}

const solved = (a: AttemptRecord) => a.status === 'verified';
