import type { Report, Summary } from './report';

/**
 * The report as one CSV table in long form, one row per (scope, bug or tier, group),
 * for spreadsheets and R/pandas. Lift rows (scope `lift`) reuse the rate columns:
 * `pass_rate` is the lift and `ci_low`/`ci_high` its interval; `n`/`passed` are the
 * context-augmented runs and `n_base`/`passed_base` the symptom-only ones. Twin rows
 * (scope `twin`) give each side of a miniature and real-code pair per group, with the
 * other side's bug in `twin`.
 */
const HEAD = [
  'scope', 'bug', 'tier', 'group', 'kind', 'model', 'condition', 'n', 'passed', 'pass_rate', 'ci_low', 'ci_high',
  'median_time_to_fix_s', 'mean_time_to_fix_s', 'mean_submissions', 'median_patch_lines', 'mean_similarity',
  'mean_tokens', 'mean_cost_usd', 'total_cost_usd', 'gave_up', 'timed_out', 'mean_hints', 'from_edits', 'n_base', 'passed_base',
  'twin', 'mean_steps',
] as const;

type Row = Partial<Record<(typeof HEAD)[number], string | number | null>>;

export function reportCsv(r: Report): string {
  const groups = new Map(r.groups.map((g) => [g.id, g]));
  const rows: Row[] = r.cells.map((c) => {
    const g = groups.get(c.group);
    return { scope: c.scope, bug: c.bugId, tier: c.tier ?? (c.bugId ? r.bugs.find((b) => b.id === c.bugId)?.tier : undefined), group: c.group, kind: g?.kind, model: g?.model, condition: g?.condition, ...summaryCols(c.summary) };
  });
  for (const l of [...r.lift.perModel, ...(r.lift.overall ? [r.lift.overall] : [])]) {
    rows.push({
      scope: 'lift', group: l.model, kind: 'agent', model: l.model === 'all models' ? '' : l.model, condition: 'context-augmented - symptom-only',
      n: l.contextAugmented.n, passed: l.contextAugmented.passed, pass_rate: l.lift, ci_low: l.ci[0], ci_high: l.ci[1],
      n_base: l.symptomOnly.n, passed_base: l.symptomOnly.passed,
    });
  }
  for (const t of r.twins) {
    for (const g of t.groups) {
      for (const [side, other] of [[g.miniature, g.upstream], [g.upstream, g.miniature]] as const) {
        const ref = groups.get(g.group);
        rows.push({
          scope: 'twin', bug: side.bugId, tier: r.bugs.find((b) => b.id === side.bugId)?.tier, group: g.group, kind: ref?.kind, model: ref?.model, condition: ref?.condition,
          n: side.n, passed: side.passed, pass_rate: side.rate, ci_low: side.ci[0], ci_high: side.ci[1],
          median_time_to_fix_s: secs(side.medianTimeToFixMs), mean_tokens: side.meanTokens, mean_steps: side.meanSteps, twin: other.bugId,
        });
      }
    }
  }
  return [HEAD.join(','), ...rows.map((row) => HEAD.map((h) => field(row[h])).join(','))].join('\n') + '\n';
}

function summaryCols(s: Summary): Row {
  return {
    n: s.n, passed: s.passed, pass_rate: s.rate, ci_low: s.ci[0], ci_high: s.ci[1],
    median_time_to_fix_s: secs(s.timeToFixMs.median), mean_time_to_fix_s: secs(s.timeToFixMs.mean),
    mean_submissions: s.submissions, median_patch_lines: s.patchLines, mean_similarity: s.similarity,
    mean_tokens: s.tokens, mean_cost_usd: s.costUsd, total_cost_usd: s.totalCostUsd, gave_up: s.gaveUp, timed_out: s.timedOut,
    mean_hints: s.hints, from_edits: s.fromEdits,
  };
}

function secs(ms: number | null): number | null {
  return ms === null ? null : Math.round(ms / 100) / 10;
}

function field(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'number' ? String(Math.round(v * 1e6) / 1e6) : v;
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
