import type { Report, Summary } from '../core/study/report';
import { say } from './output';

/** The report for a terminal: the overall table, the lift, the spread, pass rates per bug, the twins. */
export function printReport(r: Report): void {
  const apart = [r.inProgress ? `${r.inProgress} in progress` : '', r.errors ? `${r.errors} run error(s)` : '', r.interrupted ? `${r.interrupted} interrupted` : ''].filter(Boolean);
  say(`${r.counted} finished attempt(s) from ${r.files.length} file(s)${apart.length ? `; not counted: ${apart.join(', ')}` : ''}`);
  const p = r.provenance;
  if (p) say(`${p.study ? `study "${p.study.name}" (${p.study.hash})` : 'no study file'}; ddbench ${p.toolVersion}${p.bugSetHash ? `, bug set ${p.bugSetHash}` : ''}; ${p.environment}`);
  if (r.counted === 0) return;
  const overall = r.groups.map((g) => [g.id, r.cells.find((c) => c.scope === 'all' && c.group === g.id)!.summary] as const);
  say();
  table(
    ['group', 'pass rate', '95% CI', 'time to fix', 'subm.', 'lines', 'sim.', 'tokens', 'cost'],
    overall.map(([g, s]) => [g, rate(s), `${pct(s.ci[0])}–${pct(s.ci[1])}`, duration(s.timeToFixMs.median), fixed(s.submissions, 1), fixed(s.patchLines, 0), fixed(s.similarity, 2), s.tokens === null ? '' : String(Math.round(s.tokens)), s.costUsd === null ? '' : `$${s.costUsd.toFixed(3)}`]),
  );
  if (r.lift.perModel.length) {
    say('\ncontext lift (context-augmented − symptom-only over the bugs run in both, 95% Newcombe CI):');
    for (const l of [...r.lift.perModel, ...(r.lift.overall ? [r.lift.overall] : [])]) {
      say(`  ${l.model}: ${pp(l.lift)} [${pp(l.ci[0])}, ${pp(l.ci[1])}]  (${rate(l.symptomOnly)} → ${rate(l.contextAugmented)}; ${l.bugs.length} bugs; McNemar exact p = ${pValue(l.mcnemar.p)} on ${l.mcnemar.pairs} pairs, ${l.mcnemar.symptomOnlyOnly}:${l.mcnemar.contextOnly} discordant)`);
    }
  }
  const solvedBoth = r.efficiency.perModel.filter((e) => e.solvedBoth > 0);
  if (solvedBoth.length) {
    say(`\nefficiency lift (runs solved in both conditions, context − symptom-only, mean change [95% bootstrap CI, seed ${r.efficiency.seed}]):`);
    table(
      ['model', 'pairs', 'steps', 'tokens', 'cost', 'time to fix'],
      solvedBoth.map((e) => [e.model, String(e.solvedBoth), changeText(e.solved.steps, (v) => v.toFixed(1)), changeText(e.solved.tokens, (v) => String(Math.round(v))), changeText(e.solved.costUsd, (v) => `$${v.toFixed(3)}`), changeText(e.solved.timeToFixMs, (v) => `${v < 0 ? '−' : ''}${duration(Math.abs(v))}`)]),
    );
  }
  if (r.asymmetry.models.length >= 2) {
    say('\nasymmetry (models by symptom-only pass rate; rate lift and fewer steps to a fix with the context):');
    table(
      ['model', 'symptom-only', 'rate lift', 'steps saved'],
      r.asymmetry.models.map((m) => [m.model, pct(m.symptomOnlyRate), pp(m.rateLift), m.efficiencyLift === null ? '–' : pct(m.efficiencyLift)]),
    );
    const corr = (c: Report['asymmetry']['rateLift']) => (c === null ? 'n/a (too few models)' : `${c.rho.toFixed(2)}${c.ci ? ` [${c.ci[0].toFixed(2)}, ${c.ci[1].toFixed(2)}]` : ''} over ${c.n} models`);
    say(`  Spearman rho, baseline vs rate lift: ${corr(r.asymmetry.rateLift)}; vs steps saved: ${corr(r.asymmetry.efficiencyLift)}`);
  }
  for (const s of r.spread) say(`spread across ${s.models} models (${s.condition}): ${s.spreadPp.toFixed(1)} pp (${s.min.model} ${pct(s.min.rate)} … ${s.max.model} ${pct(s.max.rate)})`);
  say('\npass rate per bug:');
  table(
    ['bug', 'tier', ...r.groups.map((g) => g.id)],
    r.bugs.map((b) => [b.id, String(b.tier ?? ''), ...r.groups.map((g) => {
      const s = r.cells.find((c) => c.scope === 'bug' && c.bugId === b.id && c.group === g.id)?.summary;
      return s ? rate(s) : '–';
    })]),
  );
  for (const t of r.twins) {
    say(`\ntwins: the miniature ${t.miniature} and the real code ${t.upstream} (real − miniature, 95% Newcombe CI; paired: both / miniature only / real only / neither):`);
    table(
      ['group', 'miniature', 'real code', 'difference', 'paired', 'McNemar p', 'steps (mini, real)'],
      t.groups.map((g) => [g.group, rate(g.miniature), rate(g.upstream), `${pp(g.difference)} [${pp(g.ci[0])}, ${pp(g.ci[1])}]`, `${g.agreement.both}/${g.agreement.miniatureOnly}/${g.agreement.upstreamOnly}/${g.agreement.neither} of ${g.agreement.pairs}`, pValue(g.agreement.p), g.miniature.meanSteps === null || g.upstream.meanSteps === null ? '–' : `${g.miniature.meanSteps.toFixed(1)}, ${g.upstream.meanSteps.toFixed(1)}`]),
    );
  }
}

function changeText(c: Report['efficiency']['perModel'][number]['solved']['steps'], fmt: (v: number) => string): string {
  return c === null ? '–' : `${c.meanChange >= 0 ? '+' : ''}${fmt(c.meanChange)} [${fmt(c.ci[0])}, ${fmt(c.ci[1])}]`;
}

function pValue(p: number): string {
  return p < 0.001 ? '< 0.001' : p.toFixed(3);
}

function table(head: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd();
  say(line(head));
  for (const r of rows) say(line(r));
}

function rate(s: Pick<Summary, 'rate' | 'passed' | 'n'>): string {
  return `${pct(s.rate)} (${s.passed}/${s.n})`;
}

function pct(v: number): string {
  return `${Math.round(v * 100)}%`;
}

function pp(v: number): string {
  return `${v >= 0 ? '+' : '−'}${Math.abs(v * 100).toFixed(1)} pp`;
}

function fixed(v: number | null, digits: number): string {
  return v === null ? '' : v.toFixed(digits);
}

export function duration(ms: number | null): string {
  if (ms === null) return '';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
