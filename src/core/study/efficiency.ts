import { z } from 'zod';
import type { AttemptRecord, Condition } from './schema';
import { bootstrapMean, mcnemarExact, spearman, type RankCorrelation } from './stats';

/**
 * The paper's third finding, measured on a study's own runs: bounded debugging
 * context lifts weaker models' pass rates and stronger models' efficiency. Runs of a
 * model are paired across the two conditions by bug and repeat (the bench's repeat
 * number; without one, the k-th run of a bug in one condition with its k-th in the
 * other). On pairs solved in both, the change in steps, tokens, cost and time to the
 * first verified fix (context-augmented minus symptom-only) with seeded bootstrap 95%
 * intervals; on pairs solved in neither, the change in steps and tokens spent before
 * giving up. Discordant pairs give an exact McNemar test of the pass-rate lift.
 */

const Interval = z.tuple([z.number(), z.number()]);
const Change = z.object({ pairs: z.number().int(), symptomOnly: z.number(), contextAugmented: z.number(), meanChange: z.number(), ci: Interval });
export type Change = z.infer<typeof Change>;

export const McNemar = z.object({
  pairs: z.number().int(),
  /** Pairs solved only without the context, and only with it. */
  symptomOnlyOnly: z.number().int(),
  contextOnly: z.number().int(),
  p: z.number(),
});
export type McNemar = z.infer<typeof McNemar>;

export const EfficiencyLift = z.object({
  model: z.string(),
  pairs: z.number().int(),
  solvedBoth: z.number().int(),
  unsolvedBoth: z.number().int(),
  /** Solved in both: context-augmented minus symptom-only, means over pairs. */
  solved: z.object({ steps: Change.nullable(), tokens: Change.nullable(), costUsd: Change.nullable(), timeToFixMs: Change.nullable() }),
  /** Solved in neither: what was spent before stopping. */
  unsolved: z.object({ steps: Change.nullable(), tokens: Change.nullable() }),
  mcnemar: McNemar,
});
export type EfficiencyLift = z.infer<typeof EfficiencyLift>;

const Correlation = z.object({ rho: z.number(), n: z.number().int(), ci: Interval.nullable() });

export const Asymmetry = z.object({
  /** Models by symptom-only pass rate on their paired runs, weakest first. */
  models: z.array(
    z.object({
      model: z.string(),
      symptomOnlyRate: z.number(),
      /** Pass-rate lift on the paired runs. */
      rateLift: z.number(),
      /** Fewer steps to a fix with the context, as a fraction of the steps without it (0.25: a quarter fewer); null without pairs solved in both. */
      efficiencyLift: z.number().nullable(),
    }),
  ),
  /** Spearman's rho of baseline strength against each lift: negative for rate, positive for efficiency is the paper's asymmetry. */
  rateLift: Correlation.nullable(),
  efficiencyLift: Correlation.nullable(),
});
export type Asymmetry = z.infer<typeof Asymmetry>;

export interface Pair {
  bugId: string;
  repeat: number;
  symptomOnly: AttemptRecord;
  contextAugmented: AttemptRecord;
}

/** A model's runs paired across the conditions by bug and repeat. */
export function pairRuns(runs: readonly AttemptRecord[]): Pair[] {
  const byKey = new Map<string, Partial<Record<Condition, AttemptRecord>>>();
  const ordinal = new Map<string, number>();
  const sorted = [...runs].sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.id.localeCompare(b.id));
  for (const a of sorted) {
    if (a.actor.kind !== 'agent') continue;
    const condition = a.actor.condition;
    const counter = `${a.bug.id}|${condition}`;
    const repeat = a.bench?.repeat ?? ordinal.get(counter) ?? 0;
    ordinal.set(counter, (ordinal.get(counter) ?? 0) + 1);
    const key = `${a.bug.id}|${repeat}`;
    const slot = byKey.get(key) ?? {};
    slot[condition] ??= a;
    byKey.set(key, slot);
  }
  const pairs: Pair[] = [];
  for (const [key, slot] of byKey) {
    const [bugId, repeat] = key.split('|');
    if (slot['symptom-only'] !== undefined && slot['context-augmented'] !== undefined) {
      pairs.push({ bugId: bugId!, repeat: Number(repeat), symptomOnly: slot['symptom-only'], contextAugmented: slot['context-augmented'] });
    }
  }
  return pairs.sort((a, b) => a.bugId.localeCompare(b.bugId) || a.repeat - b.repeat);
}

const solved = (a: AttemptRecord) => a.status === 'verified';

function change(pairs: readonly Pair[], read: (a: AttemptRecord) => number | undefined, seed: number, resamples: number): Change | null {
  const kept = pairs.flatMap((p) => {
    const s = read(p.symptomOnly);
    const c = read(p.contextAugmented);
    return s === undefined || c === undefined ? [] : [{ s, c }];
  });
  const boot = bootstrapMean(
    kept.map((k) => k.c - k.s),
    seed,
    resamples,
  );
  if (boot === null) return null;
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return { pairs: kept.length, symptomOnly: avg(kept.map((k) => k.s)), contextAugmented: avg(kept.map((k) => k.c)), meanChange: boot.mean, ci: boot.ci };
}

export function efficiencyLift(model: string, runs: readonly AttemptRecord[], seed: number, resamples = 2000): EfficiencyLift {
  const pairs = pairRuns(runs);
  const both = pairs.filter((p) => solved(p.symptomOnly) && solved(p.contextAugmented));
  const neither = pairs.filter((p) => !solved(p.symptomOnly) && !solved(p.contextAugmented));
  const symptomOnlyOnly = pairs.filter((p) => solved(p.symptomOnly) && !solved(p.contextAugmented)).length;
  const contextOnly = pairs.filter((p) => !solved(p.symptomOnly) && solved(p.contextAugmented)).length;
  return {
    model,
    pairs: pairs.length,
    solvedBoth: both.length,
    unsolvedBoth: neither.length,
    solved: {
      steps: change(both, (a) => a.agent?.steps, seed, resamples),
      tokens: change(both, (a) => a.agent?.tokens, seed, resamples),
      costUsd: change(both, (a) => a.agent?.costUsd, seed, resamples),
      timeToFixMs: change(both, (a) => a.timeToFixMs, seed, resamples),
    },
    unsolved: { steps: change(neither, (a) => a.agent?.steps, seed, resamples), tokens: change(neither, (a) => a.agent?.tokens, seed, resamples) },
    mcnemar: { pairs: pairs.length, symptomOnlyOnly, contextOnly, p: mcnemarExact(symptomOnlyOnly, contextOnly) },
  };
}

/** Models ordered by baseline strength, each with its rate and efficiency lifts, and how each lift goes with strength. */
export function asymmetry(perModel: readonly EfficiencyLift[]): Asymmetry {
  const models = perModel.flatMap((e) => {
    if (e.pairs === 0) return [];
    // Each condition's solved pairs: those solved in both, plus those solved only in it.
    const symptomOnlyRate = (e.solvedBoth + e.mcnemar.symptomOnlyOnly) / e.pairs;
    const contextRate = (e.solvedBoth + e.mcnemar.contextOnly) / e.pairs;
    const steps = e.solved.steps;
    const efficiencyLift = steps === null || steps.symptomOnly === 0 ? null : (steps.symptomOnly - steps.contextAugmented) / steps.symptomOnly;
    return [{ model: e.model, symptomOnlyRate, rateLift: contextRate - symptomOnlyRate, efficiencyLift }];
  });
  models.sort((a, b) => a.symptomOnlyRate - b.symptomOnlyRate || a.model.localeCompare(b.model));
  const corr = (xs: typeof models): RankCorrelation | null => spearman(xs.map((m) => m.symptomOnlyRate), xs.map((m) => m.rateLift));
  const withEfficiency = models.filter((m): m is typeof m & { efficiencyLift: number } => m.efficiencyLift !== null);
  return {
    models,
    rateLift: corr(models),
    efficiencyLift: spearman(withEfficiency.map((m) => m.symptomOnlyRate), withEfficiency.map((m) => m.efficiencyLift)),
  };
}
