import { z } from 'zod';
import type { RecordSet } from './collect';
import { patchSimilarity } from './patch-metrics';
import { asymmetry, Asymmetry, EfficiencyLift, efficiencyLift, McNemar } from './efficiency';
import { Condition, type AttemptRecord } from './schema';
import { compareTwins, TwinComparison } from './twins';
import { mcnemarExact, mean, median, newcombe, sum, wilson } from './stats';

/**
 * The comparison of attempts: pass rates with 95% Wilson intervals, time to fix,
 * submissions, patch size and similarity to the reference fix, tokens and cost — per
 * bug, per tier and overall, for each actor group (people; each model × condition);
 * the context lift per model and overall; the spread of pass rates across models;
 * and people against agents per bug.
 *
 * Counted: every finished attempt. Attempts still in progress, and runs that ended in
 * an error of the run itself (endpoint down, workspace broken — status `error`), are
 * left out of the rates and counted apart; a person giving up, timing out or walking
 * away counts as not fixed.
 *
 * A zod schema, because the editor hands the report to a webview.
 */

const Interval = z.tuple([z.number(), z.number()]);
const Rate = z.object({ n: z.number().int(), passed: z.number().int(), rate: z.number(), ci: Interval });
export type Rate = z.infer<typeof Rate>;

export const Summary = Rate.extend({
  /** Over fixed attempts: from start to the first verified fix. */
  timeToFixMs: z.object({ median: z.number().nullable(), mean: z.number().nullable() }),
  /** Mean fixes submitted per attempt. */
  submissions: z.number().nullable(),
  /** Median changed lines (added + removed) of final patches. */
  patchLines: z.number().nullable(),
  /** Mean similarity of final patches to the reference fix (line-level Jaccard, 0..1). */
  similarity: z.number().nullable(),
  /** Means over agent runs; null for people. */
  tokens: z.number().nullable(),
  costUsd: z.number().nullable(),
  totalCostUsd: z.number(),
  gaveUp: z.number().int(),
  timedOut: z.number().int(),
  /** Mean hints taken per person's attempt; null for agents (no condition shows them hints). */
  hints: z.number().nullable(),
  /** Attempts that started from an already edited workspace (their time misses the work before). */
  fromEdits: z.number().int(),
});
export type Summary = z.infer<typeof Summary>;

export const GroupRef = z.object({
  id: z.string(),
  kind: z.enum(['people', 'agent']),
  model: z.string().optional(),
  condition: Condition.optional(),
});
export type GroupRef = z.infer<typeof GroupRef>;

export const Cell = z.object({
  scope: z.enum(['bug', 'tier', 'all']),
  bugId: z.string().optional(),
  tier: z.number().int().optional(),
  group: z.string(),
  summary: Summary,
});
export type Cell = z.infer<typeof Cell>;

export const Lift = z.object({
  model: z.string(),
  /** The bugs compared: those run in both conditions. */
  bugs: z.array(z.string()),
  symptomOnly: Rate,
  contextAugmented: Rate,
  /** Context-augmented minus symptom-only pass rate. */
  lift: z.number(),
  /** Newcombe's hybrid score interval for the difference. */
  ci: Interval,
  /** The exact McNemar test on the runs paired by bug and repeat (efficiency.ts). */
  mcnemar: McNemar,
});
export type Lift = z.infer<typeof Lift>;

export const Spread = z.object({
  condition: z.union([Condition, z.literal('all')]),
  models: z.number().int(),
  min: z.object({ model: z.string(), rate: z.number() }),
  max: z.object({ model: z.string(), rate: z.number() }),
  /** max − min, in percentage points. */
  spreadPp: z.number(),
});

export const PeopleVsAgents = z.object({
  bugId: z.string(),
  people: Summary,
  agents: Summary,
  /** People's pass rate minus agents' (all models and conditions pooled), with Newcombe's interval. */
  difference: z.number(),
  ci: Interval,
});

export const AttemptRow = z.object({
  id: z.string(),
  bugId: z.string(),
  group: z.string(),
  status: z.string(),
  participant: z.string().optional(),
  startedAt: z.string(),
  durationMs: z.number().nullable(),
  timeToFixMs: z.number().nullable(),
  submissions: z.number().int(),
  patchLines: z.number().nullable(),
  similarity: z.number().nullable(),
  hasPatch: z.boolean(),
  hints: z.number().int(),
  fromEdits: z.boolean(),
});
export type AttemptRow = z.infer<typeof AttemptRow>;

/** Where the figures come from: the study file (name and hash), the tool, the bug set and the machine. */
export const Provenance = z.object({
  study: z.object({ name: z.string(), hash: z.string() }).optional(),
  toolVersion: z.string(),
  bugSetHash: z.string().optional(),
  environment: z.string(),
});
export type Provenance = z.infer<typeof Provenance>;

export const Report = z.object({
  generatedAt: z.string(),
  provenance: Provenance.optional(),
  files: z.array(z.string()),
  problems: z.array(z.object({ file: z.string(), line: z.number().int(), kind: z.string(), message: z.string() })),
  conflicts: z.number().int(),
  upgraded: z.number().int(),
  counted: z.number().int(),
  inProgress: z.number().int(),
  errors: z.number().int(),
  /** Agent runs interrupted by the user; not counted. */
  interrupted: z.number().int(),
  groups: z.array(GroupRef),
  bugs: z.array(z.object({ id: z.string(), system: z.string().optional(), tier: z.number().int().optional(), title: z.string().optional() })),
  cells: z.array(Cell),
  lift: z.object({ perModel: z.array(Lift), overall: Lift.nullable() }),
  /** Per model, what the context changes on runs solved (or not) in both conditions; bootstrap intervals from `seed`. */
  efficiency: z.object({ seed: z.number().int(), resamples: z.number().int(), perModel: z.array(EfficiencyLift) }),
  asymmetry: Asymmetry,
  spread: z.array(Spread),
  peopleVsAgents: z.array(PeopleVsAgents),
  /** Miniature and real-code twins both attempted: rates, efficiency and agreement per group (twins.ts). */
  twins: z.array(TwinComparison),
  attempts: z.array(AttemptRow),
});
export type Report = z.infer<typeof Report>;

/** What the report knows of a bug from the bug set; the reference fix is what patches are compared with. */
export interface BugInfo {
  system: string;
  tier: 1 | 2 | 3;
  title: string;
  referenceFix: string;
  /** A miniature or a bug in the real upstream code, and the bug of the other kind with the same mechanism. */
  kind?: 'miniature' | 'upstream';
  twin?: string;
}

export const PEOPLE = 'people';

function groupOf(r: AttemptRecord): GroupRef {
  return r.actor.kind === 'human'
    ? { id: PEOPLE, kind: 'people' }
    : { id: `${r.actor.model} · ${r.actor.condition}`, kind: 'agent', model: r.actor.model, condition: r.actor.condition };
}

/** The seed of the report's bootstrap intervals when none is given (a report says which it used). */
export const DEFAULT_REPORT_SEED = 20261202;

export function buildReport(set: RecordSet, bugs: ReadonlyMap<string, BugInfo>, now: Date = new Date(), opts: { seed?: number; resamples?: number; provenance?: Provenance } = {}): Report {
  const seed = opts.seed ?? DEFAULT_REPORT_SEED;
  const resamples = opts.resamples ?? 2000;
  const finished = set.attempts.filter((a) => a.status !== 'in-progress' && a.status !== 'error' && a.status !== 'interrupted');
  const similarity = new Map<string, number | null>();
  for (const a of finished) {
    const ref = bugs.get(a.bug.id)?.referenceFix;
    similarity.set(a.id, a.patch && ref ? patchSimilarity(a.patch.diff, ref) : null);
  }
  const tierOf = (a: AttemptRecord) => a.bug.tier ?? bugs.get(a.bug.id)?.tier;
  const summarise = (xs: AttemptRecord[]) => summaryOf(xs, similarity);

  const groups = uniqueGroups(finished);
  const bugIds = [...new Set(set.attempts.map((a) => a.bug.id))].sort(byTierThenId(bugs));
  const cells: Cell[] = [];
  for (const g of groups) {
    const mine = finished.filter((a) => groupOf(a).id === g.id);
    for (const bugId of bugIds) {
      const xs = mine.filter((a) => a.bug.id === bugId);
      if (xs.length) cells.push({ scope: 'bug', bugId, group: g.id, summary: summarise(xs) });
    }
    for (const tier of [1, 2, 3]) {
      const xs = mine.filter((a) => tierOf(a) === tier);
      if (xs.length) cells.push({ scope: 'tier', tier, group: g.id, summary: summarise(xs) });
    }
    cells.push({ scope: 'all', group: g.id, summary: summarise(mine) });
  }

  const agents = finished.filter((a) => a.actor.kind === 'agent');
  const people = finished.filter((a) => a.actor.kind === 'human');
  const peopleVsAgents = bugIds.flatMap((bugId) => {
    const p = people.filter((a) => a.bug.id === bugId);
    const q = agents.filter((a) => a.bug.id === bugId);
    if (!p.length || !q.length) return [];
    const ps = summarise(p);
    const qs = summarise(q);
    return [{ bugId, people: ps, agents: qs, difference: ps.rate - qs.rate, ci: newcombe(ps.passed, ps.n, qs.passed, qs.n) }];
  });

  return {
    generatedAt: now.toISOString(),
    ...(opts.provenance && { provenance: opts.provenance }),
    files: set.files,
    problems: set.problems,
    conflicts: set.conflicts.length,
    upgraded: set.upgraded,
    counted: finished.length,
    inProgress: set.attempts.filter((a) => a.status === 'in-progress').length,
    errors: set.attempts.filter((a) => a.status === 'error').length,
    interrupted: set.attempts.filter((a) => a.status === 'interrupted').length,
    groups,
    bugs: bugIds.map((id) => {
      const info = bugs.get(id);
      const any = set.attempts.find((a) => a.bug.id === id);
      const system = any?.bug.system ?? info?.system;
      const tier = any?.bug.tier ?? info?.tier;
      return { id, ...(system !== undefined && { system }), ...(tier !== undefined && { tier }), ...(info && { title: info.title }) };
    }),
    cells,
    ...liftAndEfficiency(agents, seed, resamples),
    spread: spreadOf(agents),
    peopleVsAgents,
    twins: compareTwins(twinPairs(bugs), finished, (a) => groupOf(a).id),
    attempts: set.attempts.map((a) => rowOf(a, similarity.get(a.id) ?? null)),
  };
}

/** The twin pairs the bug set declares, each once: an upstream bug and the miniature it names. */
function twinPairs(bugs: ReadonlyMap<string, BugInfo>): { miniature: string; upstream: string }[] {
  return [...bugs].flatMap(([id, b]) => (b.kind === 'upstream' && b.twin !== undefined && bugs.get(b.twin)?.kind === 'miniature' ? [{ miniature: b.twin, upstream: id }] : []));
}

function rateOf(passed: number, n: number): Rate {
  return { n, passed, rate: n ? passed / n : 0, ci: wilson(passed, n) };
}

function summaryOf(xs: readonly AttemptRecord[], similarity: ReadonlyMap<string, number | null>): Summary {
  const fixed = xs.filter((a) => a.status === 'verified');
  const times = fixed.flatMap((a) => (a.timeToFixMs !== undefined ? [a.timeToFixMs] : []));
  const withPatch = xs.filter((a) => a.patch !== null);
  const sims = xs.flatMap((a) => {
    const s = similarity.get(a.id);
    return s === null || s === undefined ? [] : [s];
  });
  const usage = xs.flatMap((a) => (a.agent ? [a.agent] : []));
  return {
    ...rateOf(fixed.length, xs.length),
    timeToFixMs: { median: median(times), mean: mean(times) },
    submissions: mean(xs.map((a) => a.attempts)),
    patchLines: median(withPatch.map((a) => a.patch!.added + a.patch!.removed)),
    similarity: mean(sims),
    tokens: mean(usage.map((u) => u.tokens)),
    costUsd: mean(usage.map((u) => u.costUsd)),
    totalCostUsd: sum(usage.map((u) => u.costUsd)),
    gaveUp: xs.filter((a) => a.status === 'gave-up').length,
    timedOut: xs.filter((a) => a.status === 'timed-out').length,
    hints: mean(xs.flatMap((a) => (a.actor.kind === 'human' ? [a.hints.length] : []))),
    fromEdits: xs.filter((a) => a.startedFromEdits === true).length,
  };
}

/** The pass-rate lift with its McNemar test, the efficiency lift, and the asymmetry between them. */
function liftAndEfficiency(agents: readonly AttemptRecord[], seed: number, resamples: number): Pick<Report, 'lift' | 'efficiency' | 'asymmetry'> {
  const byModel = modelsOf(agents).map((model) => {
    const runs = agents.filter((a) => a.actor.kind === 'agent' && a.actor.model === model);
    return { model, runs, efficiency: efficiencyLift(model, runs, seed, resamples) };
  });
  const tests = new Map(byModel.map((m) => [m.model, m.efficiency.mcnemar]));
  const pooled = byModel.reduce((t, m) => ({ pairs: t.pairs + m.efficiency.mcnemar.pairs, symptomOnlyOnly: t.symptomOnlyOnly + m.efficiency.mcnemar.symptomOnlyOnly, contextOnly: t.contextOnly + m.efficiency.mcnemar.contextOnly }), { pairs: 0, symptomOnlyOnly: 0, contextOnly: 0 });
  tests.set('all models', { ...pooled, p: mcnemarExact(pooled.symptomOnlyOnly, pooled.contextOnly) });
  return {
    lift: liftOf(agents, tests),
    efficiency: { seed, resamples, perModel: byModel.map((m) => m.efficiency) },
    asymmetry: asymmetry(byModel.map((m) => m.efficiency)),
  };
}

/**
 * Per model: context-augmented minus symptom-only over the bugs that model ran in both
 * conditions (a bug run in one condition only would compare unlike with unlike);
 * overall: every model's paired runs pooled.
 */
function liftOf(agents: readonly AttemptRecord[], tests: ReadonlyMap<string, McNemar>): Report['lift'] {
  const runsIn = (xs: readonly AttemptRecord[], c: Condition) => xs.filter((a) => a.actor.kind === 'agent' && a.actor.condition === c);
  const rate = (xs: readonly AttemptRecord[]) => rateOf(xs.filter((a) => a.status === 'verified').length, xs.length);
  const paired = (xs: readonly AttemptRecord[]) => {
    const inBoth = new Set(runsIn(xs, 'symptom-only').map((a) => a.bug.id).filter((id) => runsIn(xs, 'context-augmented').some((a) => a.bug.id === id)));
    return xs.filter((a) => inBoth.has(a.bug.id));
  };
  const lift = (model: string, xs: readonly AttemptRecord[]): Lift | null => {
    const s = rate(runsIn(xs, 'symptom-only'));
    const c = rate(runsIn(xs, 'context-augmented'));
    if (!s.n || !c.n) return null;
    const bugs = [...new Set(xs.map((a) => a.bug.id))].sort();
    const mcnemar = tests.get(model) ?? { pairs: 0, symptomOnlyOnly: 0, contextOnly: 0, p: 1 };
    return { model, bugs, symptomOnly: s, contextAugmented: c, lift: c.rate - s.rate, ci: newcombe(c.passed, c.n, s.passed, s.n), mcnemar };
  };
  const pairedByModel = modelsOf(agents).map((m) => ({ m, xs: paired(agents.filter((a) => a.actor.kind === 'agent' && a.actor.model === m)) }));
  const perModel = pairedByModel.flatMap(({ m, xs }) => lift(m, xs) ?? []);
  return { perModel, overall: perModel.length ? lift('all models', pairedByModel.flatMap(({ xs }) => xs)) : null };
}

function spreadOf(agents: readonly AttemptRecord[]): Report['spread'] {
  const out: Report['spread'] = [];
  for (const condition of [...Condition.options, 'all'] as const) {
    const rates = modelsOf(agents).flatMap((model) => {
      const xs = agents.filter((a) => a.actor.kind === 'agent' && a.actor.model === model && (condition === 'all' || a.actor.condition === condition));
      return xs.length ? [{ model, rate: xs.filter((a) => a.status === 'verified').length / xs.length }] : [];
    });
    if (rates.length < 2) continue;
    const sorted = [...rates].sort((a, b) => a.rate - b.rate || a.model.localeCompare(b.model));
    const min = sorted[0]!;
    const max = sorted[sorted.length - 1]!;
    out.push({ condition, models: rates.length, min, max, spreadPp: (max.rate - min.rate) * 100 });
  }
  return out;
}

function rowOf(a: AttemptRecord, similarity: number | null): AttemptRow {
  return {
    id: a.id,
    bugId: a.bug.id,
    group: groupOf(a).id,
    status: a.status,
    ...(a.actor.kind === 'human' && { participant: a.actor.participant }),
    startedAt: a.startedAt,
    durationMs: a.endedAt ? Math.max(0, Date.parse(a.endedAt) - Date.parse(a.startedAt)) : null,
    timeToFixMs: a.timeToFixMs ?? null,
    submissions: a.attempts,
    patchLines: a.patch ? a.patch.added + a.patch.removed : null,
    similarity,
    hasPatch: a.patch !== null,
    hints: a.hints.length,
    fromEdits: a.startedFromEdits === true,
  };
}

function modelsOf(agents: readonly AttemptRecord[]): string[] {
  return [...new Set(agents.flatMap((a) => (a.actor.kind === 'agent' ? [a.actor.model] : [])))].sort();
}

function uniqueGroups(xs: readonly AttemptRecord[]): GroupRef[] {
  const byId = new Map<string, GroupRef>();
  for (const a of xs) {
    const g = groupOf(a);
    if (!byId.has(g.id)) byId.set(g.id, g);
  }
  const order = (g: GroupRef) => (g.kind === 'people' ? '' : `${g.model}\u0000${g.condition === 'symptom-only' ? 0 : 1}`);
  return [...byId.values()].sort((a, b) => order(a).localeCompare(order(b)));
}

function byTierThenId(bugs: ReadonlyMap<string, BugInfo>) {
  return (a: string, b: string) => (bugs.get(a)?.tier ?? 9) - (bugs.get(b)?.tier ?? 9) || a.localeCompare(b);
}
